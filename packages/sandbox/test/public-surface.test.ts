import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every runtime export of `@skillbox/sandbox`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only Skillbox's own packages need goes to
 * `@skillbox/sandbox/internal` instead.
 */
const PUBLIC_EXPORTS = [
  "DEFAULT_SANDBOX_IMAGE",
  "PROVIDER_PRIORITY",
  "SANDBOX_LABEL",
  "SANDBOX_OWNER_LABEL",
  "SANDBOX_RUNTIME_VARIABLE",
  "SandboxRunner",
  "StartedSandbox",
  "createAppleContainerProvider",
  "createBwrapProvider",
  "createContainerCliProvider",
  "createContainerRuntime",
  "createDockerProvider",
  "createOrbstackProvider",
  "createPodmanProvider",
  "createSandboxProvider",
  "createWslcProvider",
  "isSandboxProviderName",
  "resolveProvider",
  "resolveSandboxConfig",
  "sandboxRunner",
];

const packageRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * The sorted runtime export names of the built entry `@skillbox/sandbox`: a plain `node` started in this
 * package's folder resolves it as an installed package does (dist/), not to the TypeScript sources.
 */
function builtExportNames(): string[] {
  const script =
    "const entry = await import(process.argv[1]); console.log(JSON.stringify(Object.keys(entry).sort()));";
  const output = execFileSync(
    process.execPath,
    ["--input-type=module", "--eval", script, "@skillbox/sandbox"],
    {
      cwd: packageRoot,
      encoding: "utf8",
    },
  );
  return JSON.parse(output) as string[];
}

describe("the public surface of @skillbox/sandbox", () => {
  it("lists the exports in order, so that a new one is one line in its place", () => {
    expect(PUBLIC_EXPORTS).toEqual([...PUBLIC_EXPORTS].sort());
  });

  it("exports exactly the listed names from the built entry", () => {
    expect(builtExportNames()).toEqual(PUBLIC_EXPORTS);
  });

  it("exports the same names from the source entry", async () => {
    expect(Object.keys(await import("@skillbox/sandbox")).sort()).toEqual(PUBLIC_EXPORTS);
  });

  it("keeps the internal entry apart: nothing is exported from both", async () => {
    const internal = Object.keys(await import("@skillbox/sandbox/internal"));
    expect(internal.length).toBeGreaterThan(0);
    expect(internal.filter((name) => PUBLIC_EXPORTS.includes(name))).toEqual([]);
  });
});

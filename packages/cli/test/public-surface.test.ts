import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every runtime export of `skillbox`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only this package's own modules need stays unexported.
 */
const PUBLIC_EXPORTS = ["CLI_ERROR_CODES", "defineConfig", "main"];

const packageRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * The sorted runtime export names of the built entry `skillbox`: a plain `node` started in this
 * package's folder resolves it as an installed package does (dist/), not to the TypeScript sources.
 */
function builtExportNames(): string[] {
  const script =
    "const entry = await import(process.argv[1]); console.log(JSON.stringify(Object.keys(entry).sort()));";
  const output = execFileSync(process.execPath, ["--input-type=module", "--eval", script, "skillbox"], {
    cwd: packageRoot,
    encoding: "utf8",
  });
  return JSON.parse(output) as string[];
}

describe("the public surface of skillbox", () => {
  it("lists the exports in order, so that a new one is one line in its place", () => {
    expect(PUBLIC_EXPORTS).toEqual([...PUBLIC_EXPORTS].sort());
  });

  it("exports exactly the listed names from the built entry", () => {
    expect(builtExportNames()).toEqual(PUBLIC_EXPORTS);
  });

  it("exports the same names from the source entry", async () => {
    expect(Object.keys(await import("skillbox")).sort()).toEqual(PUBLIC_EXPORTS);
  });
});

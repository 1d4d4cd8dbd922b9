import { execFileSync } from "node:child_process";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every runtime export of `@skillbox/core`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only Skillbox's own packages need goes to
 * `@skillbox/core/internal` instead.
 */
const PUBLIC_EXPORTS = [
  "AddressRefusedError",
  "DEFAULT_DATABASE_PATH",
  "DEFAULT_MAX_NESTING_DEPTH",
  "DEFAULT_MAX_PAGE_BYTES",
  "DEFAULT_PREVIEW_LENGTH",
  "DEFAULT_RETRY_POLICY",
  "EXECUTION_STATUSES",
  "GLOBAL_OWNERS",
  "HOST_ONLY_ERROR_KEYS",
  "HOST_PATH_PLACEHOLDER",
  "MAX_PREVIEW_LENGTH",
  "SENSITIVE_PATH_NAMES",
  "SKILLBOX_ERROR_CATALOGUE",
  "SKILL_NAME_PATTERN",
  "SkillExecutor",
  "SkillRegistry",
  "SkillboxError",
  "TOOL_NAME_PATTERN",
  "classifyAddress",
  "closeDefaultSkillHost",
  "createAddressPolicy",
  "createConsoleLogger",
  "createGuardedLookup",
  "createSkillHost",
  "createToolNameMap",
  "defineErrorCodes",
  "defineInterceptor",
  "defineSkill",
  "deny",
  "executionFailure",
  "executionStatusForCode",
  "getDefaultSkillHost",
  "isAddressEntry",
  "isDefinedSkill",
  "isRecoverableCode",
  "isRetriedByDefault",
  "isSkillboxError",
  "isSkillboxErrorCode",
  "matchSensitivePathName",
  "normalizeHost",
  "openDatabase",
  "ownerWorkspace",
  "ownerWorkspaceSegment",
  "parseInterceptorOptions",
  "parseIpLiteral",
  "resolveDatabasePath",
  "resolveWorkspacePath",
  "scrubHostPaths",
  "skillExecutor",
  "skillRegistry",
  "toCallerError",
  "toCallerExecution",
];

/** Every runtime export of `@skillbox/core/handler`, the entry handler modules and sandboxes load. */
const HANDLER_EXPORTS = [
  "AddressRefusedError",
  "SENSITIVE_PATH_NAMES",
  "SkillboxError",
  "classifyAddress",
  "createAddressPolicy",
  "createGuardedLookup",
  "defineInterceptor",
  "defineSkill",
  "deny",
  "isAddressEntry",
  "isDefinedSkill",
  "isSkillboxError",
  "matchSensitivePathName",
  "normalizeHost",
  "ownerWorkspace",
  "ownerWorkspaceSegment",
  "parseIpLiteral",
  "resolveWorkspacePath",
];

const packageRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * Runs an ES module in a plain `node` started in this package's folder: `@skillbox/core` resolves
 * as it does for an installed package (the built files under dist/), not to the TypeScript sources
 * the tests run on. `specifier` is the script's `process.argv[1]`.
 */
function runNode(script: string, specifier: string): string {
  return execFileSync(process.execPath, ["--input-type=module", "--eval", script, specifier], {
    cwd: packageRoot,
    encoding: "utf8",
  });
}

/** The sorted runtime export names of the built entry `specifier`. */
function builtExportNames(specifier: string): string[] {
  const script =
    "const entry = await import(process.argv[1]); console.log(JSON.stringify(Object.keys(entry).sort()));";
  return JSON.parse(runNode(script, specifier)) as string[];
}

/**
 * The files of better-sqlite3 that importing `specifier` loads. better-sqlite3 is CommonJS, so
 * however it is reached (import or require), Node's CommonJS loader puts its files in
 * `require.cache`, which the same process reads after the import.
 */
function sqliteFilesLoadedBy(specifier: string): string[] {
  const script = [
    'import { createRequire } from "node:module";',
    "await import(process.argv[1]);",
    "console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));",
  ].join("\n");
  const loaded = JSON.parse(runNode(script, specifier)) as string[];
  return loaded.filter((file) => file.includes(`${sep}better-sqlite3${sep}`));
}

describe("the public surface of @skillbox/core", () => {
  it("lists the exports in order, so that a new one is one line in its place", () => {
    expect(PUBLIC_EXPORTS).toEqual([...PUBLIC_EXPORTS].sort());
    expect(HANDLER_EXPORTS).toEqual([...HANDLER_EXPORTS].sort());
  });

  it("exports exactly the listed names from the built entry", () => {
    expect(builtExportNames("@skillbox/core")).toEqual(PUBLIC_EXPORTS);
  });

  it("exports the same names from the source entry", async () => {
    expect(Object.keys(await import("@skillbox/core")).sort()).toEqual(PUBLIC_EXPORTS);
  });

  it("keeps the internal entry apart: nothing is exported from both", async () => {
    const internal = Object.keys(await import("@skillbox/core/internal"));
    expect(internal.length).toBeGreaterThan(0);
    expect(internal.filter((name) => PUBLIC_EXPORTS.includes(name))).toEqual([]);
  });
});

describe("the public surface of @skillbox/core/handler", () => {
  it("exports exactly the listed names from the built entry", () => {
    expect(builtExportNames("@skillbox/core/handler")).toEqual(HANDLER_EXPORTS);
  });

  it("never loads better-sqlite3", () => {
    expect(sqliteFilesLoadedBy("@skillbox/core/handler")).toEqual([]);
  });

  it("is checked by a probe that sees better-sqlite3 when an entry loads it (the main entry does)", () => {
    expect(sqliteFilesLoadedBy("@skillbox/core")).not.toEqual([]);
  });
});

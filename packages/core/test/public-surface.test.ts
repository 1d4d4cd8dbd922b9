import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import {
  builtExportNames,
  describePublicSurface,
  runNodeModule,
} from "@skillbox/test-helpers/public-surface";
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
  "DURATION_HISTOGRAM_BOUNDS_MS",
  "EXECUTION_STATUSES",
  "FINAL_EXECUTION_STATUSES",
  "GLOBAL_OWNERS",
  "HOST_ONLY_ERROR_KEYS",
  "HOST_PATH_PLACEHOLDER",
  "MAX_PREVIEW_LENGTH",
  "MAX_TIMELINE_BUCKETS",
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
  "createSkillboxIdGenerator",
  "createSqliteRecordStore",
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
  "isFinalExecutionStatus",
  "isPostgresUrl",
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
  "redactedUrl",
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
  const loaded = JSON.parse(runNodeModule(script, specifier, packageRoot)) as string[];
  return loaded.filter((file) => file.includes(`${sep}better-sqlite3${sep}`));
}

describePublicSurface({
  packageName: "@skillbox/core",
  packageRoot,
  exports: PUBLIC_EXPORTS,
  importSource: () => import("@skillbox/core"),
  importInternal: () => import("@skillbox/core/internal"),
});

describe("the public surface of @skillbox/core/handler", () => {
  it("lists the exports in order, so that a new one is one line in its place", () => {
    expect(HANDLER_EXPORTS).toEqual([...HANDLER_EXPORTS].sort());
  });

  it("exports exactly the listed names from the built entry", () => {
    expect(builtExportNames("@skillbox/core/handler", packageRoot)).toEqual(HANDLER_EXPORTS);
  });

  it("never loads better-sqlite3", () => {
    expect(sqliteFilesLoadedBy("@skillbox/core/handler")).toEqual([]);
  });

  it("is checked by a probe that sees better-sqlite3 when an entry loads it (the main entry does)", () => {
    expect(sqliteFilesLoadedBy("@skillbox/core")).not.toEqual([]);
  });
});

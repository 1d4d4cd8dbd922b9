import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ErrorCatalogue, SKILLBOX_ERROR_CATALOGUE } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { CLI_ERROR_CODES } from "../../packages/cli/src/cli-error-codes.ts";
import { LLM_ERROR_CODES } from "../../packages/llm/src/llm-error-codes.ts";
import { LOADER_ERROR_CODES } from "../../packages/loader/src/loader-error-codes.ts";
import { SERVER_ERROR_CODES } from "../../packages/server/src/server-error-codes.ts";
import { findRaisedErrorCodes, type RaisedErrorCode, sourceFiles } from "./raised-error-codes.ts";

const REPOSITORY_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CORE_README = join(REPOSITORY_ROOT, "packages/core/README.md");

/** Every catalogue, by the package that declares it, in the order the core README lists them. */
const CATALOGUES: ReadonlyArray<{ package: string; catalogue: ErrorCatalogue }> = [
  { package: "@skillbox/core", catalogue: SKILLBOX_ERROR_CATALOGUE },
  { package: "@skillbox/loader", catalogue: LOADER_ERROR_CODES },
  { package: "@skillbox/server", catalogue: SERVER_ERROR_CODES },
  { package: "@skillbox/llm", catalogue: LLM_ERROR_CODES },
  { package: "skillbox", catalogue: CLI_ERROR_CODES },
];

/**
 * Codes in Skillbox's sources that are not Skillbox's: each says why it may stay out of the
 * catalogues.
 */
const FOREIGN_CODES: Readonly<Record<string, string>> = {
  // The guarded DNS lookup answers a refused name as Node's resolver does, so callers that
  // branch on Node's code keep working.
  ENOTFOUND: "Node's DNS error code",
};

/** Catalogued codes the scan cannot see raised, and where they come from. */
const UNSCANNED_CODES: Readonly<Record<string, string>> = {
  // `errorCodeOf` returns it for an error without a code; no error is created with it.
  UNEXPECTED: "packages/cli/src/terminal/format-error-line.ts",
};

const README_START = "<!-- error-codes:start -->";
const README_END = "<!-- error-codes:end -->";

/** The code lists of the core README, generated from the catalogues. */
function codeLists(): string {
  const sections = CATALOGUES.map(({ package: name, catalogue }) => {
    const core = catalogue === SKILLBOX_ERROR_CATALOGUE;
    const header = core
      ? "| code | retried when thrown | status when thrown | meaning |\n| --- | --- | --- | --- |"
      : "| code | meaning |\n| --- | --- |";
    const rows = Object.entries(catalogue).map(([code, definition]) =>
      core
        ? `| \`${code}\` | ${definition.retryable === false ? "no" : "yes"} | \`${definition.status ?? "error"}\` | ${definition.description} |`
        : `| \`${code}\` | ${definition.description} |`,
    );
    return [`#### \`${name}\``, "", header, ...rows].join("\n");
  });
  return [README_START, ...sections.flatMap((section) => ["", section]), "", README_END].join("\n");
}

function raisedCodes(): RaisedErrorCode[] {
  const roots = ["core", "loader", "sandbox", "server", "llm", "cli", "distributed"].map((name) =>
    join(REPOSITORY_ROOT, "packages", name, "src"),
  );
  const files = [...roots, join(REPOSITORY_ROOT, "plugins")].flatMap((root) => sourceFiles(root));
  expect(files.length).toBeGreaterThan(100);
  return files.flatMap((file) => findRaisedErrorCodes(file, REPOSITORY_ROOT));
}

const CATALOGUED = new Map(
  CATALOGUES.flatMap(({ package: name, catalogue }) =>
    Object.keys(catalogue).map((code) => [code, name] as const),
  ),
);

describe("findRaisedErrorCodes", () => {
  it("finds codes in every shape Skillbox raises them in, and nothing else", () => {
    const sample = [
      'throw new SkillboxError("PLAIN_CODE", "…");',
      'throw new SkillboxError(which === "a" ? "WHEN_TRUE" : "WHEN_FALSE", "…");',
      'throw usageError("USAGE_CODE", "…");',
      'return failure({ code: "PROPERTY_CODE", message: "…" });',
      'const code = status === 413 ? "VARIABLE_CODE" : "";',
      'const warning = { code: "CONST_CODE" as const };',
      'interface Warning { code: "TYPE_ONE" | "TYPE_TWO"; }',
      "db.prepare(`UPDATE t SET error_code = 'SQL_CODE' WHERE id = ?`);",
      'if (error.code === "COMPARED_ONLY") return;',
      'throw new SkillboxError(error.code, "passed on");',
      'const label = "NOT_A_CODE_PLACE";',
      'throw new SkillboxError("lower-case", "not a code shape");',
    ].join("\n");
    const found = findRaisedErrorCodes(join(REPOSITORY_ROOT, "sample.ts"), REPOSITORY_ROOT, sample);
    expect(found.map(({ code, at }) => `${at} ${code}`)).toEqual([
      "sample.ts:1 PLAIN_CODE",
      "sample.ts:2 WHEN_TRUE",
      "sample.ts:2 WHEN_FALSE",
      "sample.ts:3 USAGE_CODE",
      "sample.ts:4 PROPERTY_CODE",
      "sample.ts:5 VARIABLE_CODE",
      "sample.ts:6 CONST_CODE",
      "sample.ts:7 TYPE_ONE",
      "sample.ts:7 TYPE_TWO",
      "sample.ts:8 SQL_CODE",
    ]);
  });
});

describe("error catalogues", () => {
  it("list every code Skillbox's own sources raise (packages/*/src, plugins)", () => {
    const missing = raisedCodes().filter(({ code }) => !CATALOGUED.has(code) && !(code in FOREIGN_CODES));
    expect(
      missing.map(({ code, at }) => `${at} ${code}`),
      "declare these codes in a catalogue (core's SKILLBOX_ERROR_CATALOGUE or the package's defineErrorCodes table)",
    ).toEqual([]);
  });

  it("list no code that nothing raises", () => {
    const raised = new Set(raisedCodes().map(({ code }) => code));
    const unused = [...CATALOGUED.keys()].filter((code) => !raised.has(code) && !(code in UNSCANNED_CODES));
    expect(unused, "remove these codes, or say in UNSCANNED_CODES where they come from").toEqual([]);
  });

  it("declare each code once, with one line of documentation", () => {
    const seen = new Map<string, string>();
    for (const { package: name, catalogue } of CATALOGUES) {
      for (const [code, definition] of Object.entries(catalogue)) {
        expect(seen.get(code), `${code} is declared by ${seen.get(code)} and ${name}`).toBeUndefined();
        seen.set(code, name);
        expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
        expect(definition.description, code).toMatch(/^[^\n|]+\.$/);
      }
    }
  });

  it("are listed in the core README as the catalogues say", () => {
    const readme = readFileSync(CORE_README, "utf8");
    const expected = codeLists();
    if (process.env.SKILLBOX_WRITE_ERROR_CODES === "1") {
      const start = readme.indexOf(README_START);
      const end = readme.indexOf(README_END);
      writeFileSync(
        CORE_README,
        `${readme.slice(0, start)}${expected}${readme.slice(end + README_END.length)}`,
      );
      return;
    }
    const start = readme.indexOf(README_START);
    const end = readme.indexOf(README_END);
    expect(start, `packages/core/README.md has no ${README_START} … ${README_END} block`).toBeGreaterThan(-1);
    expect(
      readme.slice(start, end + README_END.length),
      "regenerate the list: SKILLBOX_WRITE_ERROR_CODES=1 pnpm exec vitest run test/style/error-codes.test.ts",
    ).toBe(expected);
  });
});

// Temp folders, skill packages on disk and report formatting shared by the loader benchmarks.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A logger that drops everything (benchmarks print their own table). */
export function silentLogger() {
  const nothing = () => {};
  return { debug: nothing, info: nothing, warn: nothing, error: nothing };
}

/**
 * A temp folder removed by `cleanup()` (also on exit and on Ctrl-C). `tag` is a random word to put
 * in package folder names: jiti's transform cache (`<tmpdir>/jiti`) names its files after the
 * folder of the module, so `cleanup()` can remove the entries this run created, and only those.
 */
export function temporaryDirectory(prefix) {
  const tag = `skillbox-bench-${randomBytes(4).toString("hex")}`;
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  let removed = false;
  const cleanup = () => {
    if (removed) return;
    removed = true;
    rmSync(path, { recursive: true, force: true });
    const jitiCache = join(tmpdir(), "jiti");
    let entries = [];
    try {
      entries = readdirSync(jitiCache);
    } catch {
      // No jiti cache folder: nothing of ours in it.
    }
    for (const entry of entries) {
      if (entry.startsWith(tag)) rmSync(join(jitiCache, entry), { force: true });
    }
  };
  process.once("exit", cleanup);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      cleanup();
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    });
  }
  return { path, tag, cleanup };
}

/** Writes a skill package (`skill.json` with schemas + `index.ts`) into `root`. */
export function writeSkillPackage(root, { name, version = "1.0.0", handlerSource }) {
  mkdirSync(root, { recursive: true });
  const manifest = {
    name,
    version,
    description: `Benchmark skill ${name}`,
    input: {
      type: "object",
      properties: { value: { type: "number" }, label: { type: "string" } },
      additionalProperties: false,
    },
    output: { type: "number" },
    handler: "./index.ts",
    tags: ["bench"],
  };
  writeFileSync(join(root, "skill.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(root, "index.ts"), handlerSource);
}

/** A TypeScript handler that returns `value` (type annotations, so jiti has to transform it). */
export const handlerReturning = (value) =>
  `interface Input {\n  value?: number;\n}\n\nexport default (input: Input): number => ${value} + (input.value ?? 0);\n`;

/** `ms` with a sensible number of decimals. */
export const formatMs = (ms) => `${ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : Math.round(ms)} ms`;

/** Bytes as MB. */
export const formatMb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Prints rows of cells as left-aligned columns, indented by two spaces. */
export function printTable(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column] ?? "").length)));
  for (const row of rows) {
    console.log(
      `  ${row
        .map((cell, column) => String(cell ?? "").padEnd(widths[column]))
        .join("  ")
        .trimEnd()}`,
    );
  }
}

/** `OK` or `MISSED`. */
export const verdict = (met) => (met ? "OK" : "MISSED");

/**
 * Registers the benches' `noop@1.0.0` skill (public, input `{ type: "object" }`, returning its
 * input) on `host`, and with `interceptors` that many no-op interceptors (`before` and `after`),
 * the load executor-overhead measures. Returns the handler.
 */
export function registerNoopSkill(host, { interceptors = 0, description } = {}) {
  host.registry.register({
    name: "noop",
    version: "1.0.0",
    ...(description === undefined ? {} : { description }),
    schema: { input: { type: "object" } },
    handler: "noop",
    apiKeyId: "public",
  });
  const handler = async (input) => input;
  host.executor.registerHandler("noop", handler);
  for (const name of ["first", "second", "third", "fourth", "fifth"].slice(0, interceptors)) {
    host.executor.use({ name, before() {}, after() {} });
  }
  return handler;
}

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createSkillHost, openDatabase, type RegistryChange, type SkillHost } from "@skillbox/core";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { UNDO_DURABLE_EXECUTIONS } from "./undo-durable-executions.js";

const directories: string[] = [];
const hosts: SkillHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A `skills` row as the previous version wrote it: code and examples inside `metadata`. */
interface LegacySkillRow {
  name: string;
  handler: string;
  runtime?: string;
  contentHash?: string;
  metadata?: Record<string, unknown>;
}

/**
 * A database file as the version before typed skill code left it (schema version 3: no `code`
 * or `examples` column), holding `rows`.
 */
function databaseBeforeTypedCode(directory: string, rows: LegacySkillRow[]): string {
  const path = join(directory, "skillbox.db");
  const database = openDatabase({ path });
  database.exec(`
    ${UNDO_DURABLE_EXECUTIONS}
    ALTER TABLE skills DROP COLUMN code;
    ALTER TABLE skills DROP COLUMN examples;
    PRAGMA user_version = 3;
  `);
  const insert = database.prepare(
    `INSERT INTO skills (id, api_key_id, name, version, input_schema, handler, runtime, content_hash, metadata,
       created_at, updated_at)
     VALUES (?, 'system', ?, '1.0.0', '{}', ?, ?, ?, ?, ?, ?)`,
  );
  for (const [index, row] of rows.entries()) {
    insert.run(
      `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      row.name,
      row.handler,
      row.runtime ?? "inline",
      row.contentHash ?? `content-${row.name}`,
      row.metadata === undefined ? null : JSON.stringify(row.metadata),
      Date.now(),
      Date.now(),
    );
  }
  database.close();
  return path;
}

function openHost(path: string): SkillHost {
  const host = createSkillHost({ database: path, logger: { debug() {}, info() {}, warn() {}, error() {} } });
  hosts.push(host);
  return host;
}

/** Writes a handler module returning `{ from }` and returns its path. */
function handlerModule(path: string, from: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, `export default function handler() { return { from: ${JSON.stringify(from)} }; }\n`);
  return path;
}

describe("migrate to typed skill code", () => {
  it("moves the code location and examples of the loader's rows out of metadata into their columns", () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    const packageRoot = join(directory, "plugins", "echo");
    const bundle = join(directory, "plugins", "tools");
    const examples = [{ description: "hello", input: { msg: "hi" }, output: { echoed: "hi" } }];
    const echoMetadata = {
      loader: "@skillbox/loader",
      root: packageRoot,
      origin: join(directory, "plugins"),
      handlerPath: join(packageRoot, "index.mjs"),
      codeHash: "code-hash-echo",
      manifestEnabled: true,
      examples,
    };
    const path = databaseBeforeTypedCode(directory, [
      { name: "echo", handler: pathToFileURL(join(packageRoot, "index.mjs")).href, metadata: echoMetadata },
      {
        name: "member",
        handler: pathToFileURL(join(bundle, "member", "index.mjs")).href,
        metadata: {
          loader: "@skillbox/loader",
          root: join(bundle, "member"),
          codeRoot: bundle,
          handlerPath: join(bundle, "member", "index.mjs"),
          codeHash: "code-hash-member",
        },
      },
      // A row without a code hash ran with the content hash as its code hash.
      {
        name: "unhashed",
        handler: "unhashed",
        contentHash: "content-unhashed",
        metadata: { root: packageRoot, handlerPath: join(packageRoot, "index.mjs") },
      },
      { name: "api", handler: "api", metadata: { nested: { value: 1 }, examples: "not a list" } },
      { name: "bare", handler: "bare" },
    ]);

    const host = openHost(path);

    expect(host.database.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(4);
    const echo = host.registry.getSkill("echo")!;
    expect(echo.code).toEqual({
      modulePath: join(packageRoot, "index.mjs"),
      codeHash: "code-hash-echo",
      root: packageRoot,
    });
    expect(echo.examples).toEqual(examples);
    // Left as it was, for a process of the previous version that shares the file.
    expect(echo.metadata).toEqual(echoMetadata);
    expect(host.registry.getSkill("member")?.code).toEqual({
      modulePath: join(bundle, "member", "index.mjs"),
      codeHash: "code-hash-member",
      root: bundle,
    });
    expect(host.registry.getSkill("member")?.examples).toBeUndefined();
    expect(host.registry.getSkill("unhashed")?.code?.codeHash).toBe("content-unhashed");
    for (const name of ["api", "bare"]) {
      expect(host.registry.getSkill(name)?.code).toBeUndefined();
      expect(host.registry.getSkill(name)?.examples).toBeUndefined();
    }
  });

  it("runs a loader skill written by the previous version from its snapshot in a worker thread", async () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    const packageRoot = join(directory, "plugins", "echo");
    const original = handlerModule(join(packageRoot, "index.mjs"), "package");
    const snapshot = handlerModule(join(directory, "snapshots", "echo", "index.mjs"), "snapshot");
    const path = databaseBeforeTypedCode(directory, [
      {
        name: "echo",
        handler: pathToFileURL(original).href,
        runtime: "worker",
        metadata: { loader: "@skillbox/loader", root: packageRoot, handlerPath: snapshot, codeHash: "h" },
      },
    ]);

    const host = openHost(path);
    const execution = await host.executor.execute("echo", {});

    expect(execution.error).toBeNull();
    expect(execution.output).toEqual({ from: "snapshot" });
  });

  it("rewrites nothing when a handler skill the previous version stored is registered again", () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    // The content hash the previous version stored for `{ name: "x", version: "1.0.0", handler: "x-handler" }`.
    const path = databaseBeforeTypedCode(directory, [
      {
        name: "x",
        handler: "x-handler",
        contentHash: "2de4ac8d5ad34f355c8e7dd5eb8b932eb6fe92bde849e5d0052799d92dcdfab4",
      },
    ]);
    const host = openHost(path);
    const before = host.registry.getSkill("x")!;
    const changes: RegistryChange[] = [];
    host.registry.on("change", (change) => changes.push(change));

    const again = host.registry.register({ name: "x", version: "1.0.0", handler: "x-handler" });

    expect(again).toEqual(before);
    expect(changes).toEqual([]);
  });
});

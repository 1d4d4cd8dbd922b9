import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSkillHost, type SkillHost, type SkillHostOptions } from "@skillbox/core";

/** A host over a real SQLite file in a fresh temp folder; `dispose()` closes it and deletes the folder. */
export interface TemporaryHost extends SkillHost {
  directory: string;
  databasePath: string;
  dispose(): Promise<void>;
}

/** Creates a folder under the OS temp dir that the caller must remove. */
export function createTemporaryDirectory(prefix = "skillbox-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Creates an isolated host on a real database file; logs are silenced unless the test passes a logger. */
export function createTemporaryHost(options: Omit<SkillHostOptions, "database"> = {}): TemporaryHost {
  const directory = createTemporaryDirectory();
  const databasePath = join(directory, "skillbox.db");
  const host = createSkillHost({
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...options,
    database: databasePath,
  });
  return {
    ...host,
    directory,
    databasePath,
    async dispose() {
      await host.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

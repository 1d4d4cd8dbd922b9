import type Database from "better-sqlite3";
import { type OpenDatabaseOptions, openDatabase } from "./database/open-database.js";
import {
  SkillExecutor,
  type SkillExecutorCloseOptions,
  type SkillExecutorOptions,
} from "./executor/skill-executor.js";
import { SkillRegistry } from "./registry/skill-registry.js";
import type { HostCloseHandler } from "./types.js";

/** Options of {@link createSkillHost}. */
export interface SkillHostOptions extends Omit<SkillExecutorOptions, "registry"> {
  /** An open database, or where to open one (default `SKILLBOX_DB`, then `./.skillbox/skillbox.db`). */
  database?: Database.Database | string;
  /** Options used when the host opens the database itself. */
  databaseOptions?: Omit<OpenDatabaseOptions, "path">;
}

/** A registry and an executor sharing one database. */
export interface SkillHost {
  database: Database.Database;
  registry: SkillRegistry;
  executor: SkillExecutor;
  /**
   * Waits for running executions (up to `graceMs`, then cancels the rest, recorded `cancelled`),
   * runs the close handlers, then closes the database if the host opened it.
   */
  close(options?: SkillExecutorCloseOptions): Promise<void>;
  /** Registers cleanup to run when the host closes (see {@link SkillExecutor.onClose}). Returns an unregister function. */
  onClose(handler: HostCloseHandler): () => void;
}

/**
 * Creates an isolated registry + executor over one SQLite database — what apps and tests use
 * instead of the default instances.
 */
export function createSkillHost(options: SkillHostOptions = {}): SkillHost {
  const ownsDatabase = typeof options.database !== "object";
  const database =
    typeof options.database === "object"
      ? options.database
      : openDatabase({ ...options.databaseOptions, path: options.database });
  const registry = new SkillRegistry({ database });
  const executor = new SkillExecutor({ ...options, registry });
  return {
    database,
    registry,
    executor,
    async close(closeOptions) {
      await executor.close(closeOptions);
      if (ownsDatabase && database.open) database.close();
    },
    onClose: (handler) => executor.onClose(handler),
  };
}

import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { isPostgresUrl, redactedUrl } from "../distributed/database-url.js";
import { SkillboxError } from "../errors/skillbox-error.js";
import { migrate } from "./migrations.js";

/** The database file used when neither an option nor `SKILLBOX_DB` names one. */
export const DEFAULT_DATABASE_PATH = "./.skillbox/skillbox.db";

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** File path, or `:memory:`. Defaults to `SKILLBOX_DB`, then `./.skillbox/skillbox.db`. */
  path?: string;
  /** How long a writer waits for another process's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
}

/** The path {@link openDatabase} would open for these options. */
export function resolveDatabasePath(path?: string): string {
  const chosen = path ?? process.env.SKILLBOX_DB ?? DEFAULT_DATABASE_PATH;
  return chosen === ":memory:" ? chosen : resolve(chosen);
}

/**
 * Opens (and creates, and migrates) a Skillbox SQLite database: WAL journal so readers never
 * block the writer, `synchronous = NORMAL` (a commit survives a process crash; WAL is synced
 * at checkpoints), and a busy timeout so concurrent processes queue instead of failing.
 */
export function openDatabase(options: OpenDatabaseOptions = {}): Database.Database {
  const chosen = options.path ?? process.env.SKILLBOX_DB;
  if (chosen !== undefined && isPostgresUrl(chosen)) {
    // Without this check the URL would become a file path such as ./postgres:/db/skillbox.
    throw new SkillboxError(
      "CONFIG_INVALID",
      `${options.path === undefined ? "SKILLBOX_DB" : "The database"} is a PostgreSQL URL (${redactedUrl(chosen)}), and an embedded host opens SQLite files: ` +
        "for a shared record in PostgreSQL use createDistributedHost({ database, queue }) of @skillbox/distributed (or `skillbox serve --db … --queue …`)",
    );
  }
  const path = resolveDatabasePath(options.path);
  let database: Database.Database;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    database = new Database(path);
  } catch (error) {
    throw new SkillboxError(
      "DATABASE_ERROR",
      `Cannot open the Skillbox database at ${path}: ${(error as Error).message}. ` +
        "Check that the folder is writable, or point SKILLBOX_DB at another file.",
      { cause: error },
    );
  }
  database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  migrate(database);
  return database;
}

import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { SQLITE_SCHEMA_VERSION } from "./migrations.js";
import { resolveDatabasePath } from "./open-database.js";

/** A database's schema version next to the newest one this code knows. */
export interface SchemaVersion {
  /** The version applied to the database (0: never migrated). */
  applied: number;
  /** The newest version this code knows: a lower `applied` needs migration. */
  latest: number;
}

/**
 * The schema version of the SQLite file at `path`, read without creating, migrating or writing
 * it (`skillbox doctor` only looks); undefined when there is no such file.
 */
export function readSqliteSchemaVersion(path: string): SchemaVersion | undefined {
  const resolved = resolveDatabasePath(path);
  if (resolved === ":memory:" || !existsSync(resolved)) return undefined;
  const database = new Database(resolved, { readonly: true, fileMustExist: true });
  try {
    const applied = database.pragma("user_version", { simple: true }) as number;
    return { applied, latest: SQLITE_SCHEMA_VERSION };
  } finally {
    database.close();
  }
}

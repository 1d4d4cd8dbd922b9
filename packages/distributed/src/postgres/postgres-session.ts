import pg from "pg";
import { storeError } from "./postgres-errors.js";

/** What a statement runs on: the pool (one statement, autocommit) or one transaction's client. */
export interface Queryable {
  /** The rows of a statement. */
  rows<Row>(sql: string, parameters?: readonly unknown[]): Promise<Row[]>;
  /** The first row of a statement, or undefined. */
  one<Row>(sql: string, parameters?: readonly unknown[]): Promise<Row | undefined>;
  /** Runs a statement; resolves with how many rows it changed. */
  run(sql: string, parameters?: readonly unknown[]): Promise<number>;
}

/** OID of BIGINT (`int8`): node-postgres reads it as a string, lest a huge value lose digits. */
const INT8_OID = 20;

/**
 * Every BIGINT this store keeps is a ms timestamp, a counter or a sequence number, all far below
 * 2^53: read as numbers, so rows map like SQLite's. Set per pool, never on `pg.types` (global:
 * it would change every other pool in the process).
 */
export const RECORD_TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID && format !== "binary") return (value: string) => Number(value);
    return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
  },
} as pg.CustomTypesConfig;

function queryableOf(client: pg.Pool | pg.PoolClient, target: string): Queryable {
  const execute = async (sql: string, parameters?: readonly unknown[]) => {
    try {
      return await client.query(sql, parameters as unknown[] | undefined);
    } catch (error) {
      throw storeError(error, target);
    }
  };
  return {
    async rows<Row>(sql: string, parameters?: readonly unknown[]) {
      return (await execute(sql, parameters)).rows as Row[];
    },
    async one<Row>(sql: string, parameters?: readonly unknown[]) {
      return (await execute(sql, parameters)).rows[0] as Row | undefined;
    },
    async run(sql: string, parameters?: readonly unknown[]) {
      return (await execute(sql, parameters)).rowCount ?? 0;
    },
  };
}

/**
 * The pool and its transactions: every error comes out as a `SkillboxError`
 * (`STORE_UNAVAILABLE` naming host:port, else `DATABASE_ERROR`), and every transaction runs on
 * one client it always gives back.
 */
export class PostgresSession implements Queryable {
  private readonly direct: Queryable;

  constructor(
    readonly pool: pg.Pool,
    /** `host:port` of the database, for messages. */
    readonly target: string,
  ) {
    this.direct = queryableOf(pool, target);
  }

  rows<Row>(sql: string, parameters?: readonly unknown[]): Promise<Row[]> {
    return this.direct.rows<Row>(sql, parameters);
  }

  one<Row>(sql: string, parameters?: readonly unknown[]): Promise<Row | undefined> {
    return this.direct.one<Row>(sql, parameters);
  }

  run(sql: string, parameters?: readonly unknown[]): Promise<number> {
    return this.direct.run(sql, parameters);
  }

  /**
   * Runs `work` in one transaction (READ COMMITTED: the writes guard themselves with row locks
   * and conditions). Commits what it returns; rolls back when it throws, or when it returns
   * `ROLLBACK` (a guarded write that found its claim gone: nothing of it may stay).
   */
  async transaction<Result>(
    work: (transaction: Queryable) => Promise<Result | typeof ROLLBACK>,
  ): Promise<Result | undefined> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error, this.target);
    }
    // A client whose connection broke must not go back to the pool for the next caller.
    let broken: Error | undefined;
    try {
      const transaction = queryableOf(client, this.target);
      await transaction.run("BEGIN");
      let result: Result | typeof ROLLBACK;
      try {
        result = await work(transaction);
      } catch (error) {
        await client.query("ROLLBACK").catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw error;
      }
      if (result === ROLLBACK) {
        await transaction.run("ROLLBACK");
        return undefined;
      }
      await transaction.run("COMMIT");
      return result;
    } catch (error) {
      broken ??= error instanceof Error && isBrokenConnection(error) ? error : undefined;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

/** What a transaction's work returns to roll back without an error. */
export const ROLLBACK: unique symbol = Symbol("rollback");

function isBrokenConnection(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "STORE_UNAVAILABLE";
}

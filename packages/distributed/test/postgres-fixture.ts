import { createPostgresRecordStore, type PostgresRecordStore } from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { afterAll, beforeAll } from "vitest";

/** A fresh database of the file's cluster and the stores opened on it. */
export interface FreshDatabase {
  url: string;
  /** Opens another store on the database (as another process would), migrated unless told not to. */
  openStore(migrate?: boolean): Promise<PostgresRecordStore>;
  /** Closes every store {@link openStore} returned. */
  close(): Promise<void>;
}

/** What a test file gets from {@link usePostgresCluster}. */
export interface PostgresFixture {
  /** The file's cluster (started in `beforeAll`: read it inside a test or hook). */
  readonly cluster: RunningPostgres;
  /** A new, empty database; its stores name `applicationName` in `pg_stat_activity`. */
  freshDatabase(applicationName?: string): FreshDatabase;
}

/**
 * One PostgreSQL cluster for the calling test file: started before its tests, stopped after them.
 * Call it at the top level of the file; every test takes a database of its own.
 */
export function usePostgresCluster(): PostgresFixture {
  let cluster: RunningPostgres | undefined;
  let databases = 0;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const started = (): RunningPostgres => {
    if (cluster === undefined)
      throw new Error("the PostgreSQL cluster starts in beforeAll: use it in a test");
    return cluster;
  };
  return {
    get cluster() {
      return started();
    },
    freshDatabase(applicationName = "skillbox-test") {
      const url = started().createDatabase(`records_${process.pid}_${++databases}`);
      const stores: PostgresRecordStore[] = [];
      return {
        url,
        async openStore(migrate = true) {
          const store = createPostgresRecordStore({ url, pool: { max: 4 }, applicationName });
          stores.push(store);
          if (migrate) await store.migrate();
          return store;
        },
        async close() {
          await Promise.all(stores.splice(0).map((store) => store.close()));
        },
      };
    },
  };
}

/** A throwaway PostgreSQL cluster a test started on a loopback port, stopped by {@link RunningPostgres.stop}. */
export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** Creates an empty database and returns its URL (one per test keeps tests apart). */
  createDatabase(name: string): string;
  /** Stops the server (immediate shutdown) and deletes the cluster's folder. */
  stop(): Promise<void>;
}

/** The newest PostgreSQL installed from Debian's packages (`/usr/lib/postgresql/<major>/bin`). */
export declare function postgresBinaries(): string | undefined;

/**
 * Starts a PostgreSQL cluster of its own: `initdb` into a temporary folder, then `postgres` on a
 * free loopback port, trust authentication, fsync off (a test's data need not survive a crash).
 */
export declare function startPostgresCluster(): Promise<RunningPostgres>;

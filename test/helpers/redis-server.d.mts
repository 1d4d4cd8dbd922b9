/** A redis-server a test started on a loopback port, stopped by {@link RunningRedis.stop}. */
export interface RunningRedis {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Kills the server (SIGKILL, no save: its data is gone) and starts a new one on the same port. */
  restart(): Promise<void>;
  /** Stops the server this helper started. */
  stop(): Promise<void>;
}

/** Options of {@link startRedisServer}. */
export interface StartRedisOptions {
  /** `maxmemory-policy` (default `noeviction`, what BullMQ needs). */
  maxmemoryPolicy?: string;
}

/** Starts a redis-server of its own on a free loopback port (apt-get install redis-server). */
export declare function startRedisServer(options?: StartRedisOptions): Promise<RunningRedis>;

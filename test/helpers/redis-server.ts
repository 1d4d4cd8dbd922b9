import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createConnection } from "node:net";
import { freeLoopbackPort } from "./free-loopback-port.js";

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

const START_TIMEOUT_MS = 15_000;

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.setTimeout(1000);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function spawnRedis(port: number, options: StartRedisOptions): ChildProcess {
  // No persistence: a restart loses every key, the worst case for queued work.
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      options.maxmemoryPolicy ?? "noeviction",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

async function waitReady(child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `redis-server on port ${port} exited (${child.exitCode ?? child.signalCode}) before it answered`,
      );
    }
    if (await answersPing(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`redis-server on port ${port} did not answer PING within ${START_TIMEOUT_MS} ms`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/** Starts a redis-server of its own on a free loopback port (apt-get install redis-server). */
export async function startRedisServer(options: StartRedisOptions = {}): Promise<RunningRedis> {
  const port = await freeLoopbackPort();
  let child = spawnRedis(port, options);
  await waitReady(child, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart() {
      await kill(child);
      child = spawnRedis(port, options);
      await waitReady(child, port);
    },
    async stop() {
      await kill(child);
    },
  };
}

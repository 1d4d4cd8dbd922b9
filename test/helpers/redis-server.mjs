// Plain JavaScript (types in redis-server.d.mts) so that bench/*.mjs, which Node runs without a
// TypeScript loader, starts its server with the same code as the tests.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createConnection } from "node:net";
import { freeLoopbackPort } from "./free-loopback-port.mjs";

const START_TIMEOUT_MS = 15_000;

async function answersPing(port) {
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

function spawnRedis(port, options) {
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

async function waitReady(child, port) {
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

async function kill(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/** Starts a redis-server of its own on a free loopback port (apt-get install redis-server). */
export async function startRedisServer(options = {}) {
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

import { isSkillboxError, SkillboxError } from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";
import { parseApiKeys, type RunningHttpServer, startHttpServer } from "../src/index.js";

const servers: RunningHttpServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const hello = () => Response.json({ hello: "world" });

async function start(options: Parameters<typeof startHttpServer>[0]): Promise<RunningHttpServer> {
  const server = await startHttpServer(options);
  servers.push(server);
  return server;
}

async function caught(promise: Promise<unknown>): Promise<SkillboxError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isSkillboxError(error)) throw new Error(`expected a SkillboxError, got ${String(error)}`);
  return error;
}

describe("startHttpServer", () => {
  it("listens on 127.0.0.1 and a free port when asked for port 0", async () => {
    const server = await start({ fetch: hello, port: 0, apiKeysConfigured: false });

    expect(server.hostname).toBe("127.0.0.1");
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(await (await fetch(`${server.url}/`)).json()).toEqual({ hello: "world" });
  });

  it("refuses a non-loopback hostname without API keys, naming the fix", async () => {
    for (const hostname of ["0.0.0.0", "::", "192.0.2.10"]) {
      const error = await caught(
        startHttpServer({ fetch: hello, port: 0, hostname, apiKeysConfigured: false }),
      );
      expect(error.code).toBe("SERVER_UNSAFE_BIND");
      expect(error.message).toContain(hostname);
      expect(error.message).toContain("SKILLBOX_API_KEYS");
      expect(error.message).toContain("127.0.0.1");
    }
  });

  it("listens on 0.0.0.0 when API keys are configured", async () => {
    const server = await start({ fetch: hello, port: 0, hostname: "0.0.0.0", apiKeysConfigured: true });

    expect(await (await fetch(`http://127.0.0.1:${server.port}/`)).json()).toEqual({ hello: "world" });
  });

  it("reports a port in use as SERVER_LISTEN_FAILED", async () => {
    const first = await start({ fetch: hello, port: 0, apiKeysConfigured: false });

    const error = await caught(startHttpServer({ fetch: hello, port: first.port, apiKeysConfigured: false }));

    expect(error.code).toBe("SERVER_LISTEN_FAILED");
    expect(error.message).toContain("already in use");
  });

  it("closes promptly with an idle keep-alive connection open, and close() is idempotent", async () => {
    const server = await startHttpServer({ fetch: hello, port: 0, apiKeysConfigured: false });
    await (await fetch(`${server.url}/`)).text(); // leaves a keep-alive connection in fetch's pool

    const started = Date.now();
    await Promise.all([server.close(), server.close()]);

    expect(Date.now() - started).toBeLessThan(1000);
    await expect(fetch(`${server.url}/`)).rejects.toThrow();
  });
});

describe("parseApiKeys", () => {
  it("parses key:owner pairs, trimming blanks and skipping empty entries", () => {
    expect(parseApiKeys(" key1:owner1 , key2:team:ops,")).toEqual({ key1: "owner1", key2: "team:ops" });
    expect(parseApiKeys("")).toEqual({});
  });

  it("keeps an owner's +approver suffix for createHttpApp to read, and owners with ':' as they were", () => {
    expect(parseApiKeys("k1:alice,k2:alice+approver,k3:team:ops+approver")).toEqual({
      k1: "alice",
      k2: "alice+approver",
      k3: "team:ops+approver",
    });
  });

  it("keeps a key named __proto__ as an ordinary entry", () => {
    const keys = parseApiKeys("__proto__:alice");

    expect(Object.getPrototypeOf(keys)).toBe(Object.prototype);
    expect(Object.entries(keys)).toEqual([["__proto__", "alice"]]);
  });

  it.each([
    ["a-secret-key-without-owner", "entry 1", "no owner"],
    ["k1:alice,:bob", "entry 2", "empty key"],
    ["k1:alice,k2:", "entry 2", "empty owner"],
    ["k1:alice,k1:bob", "entry 2", "repeats a key"],
    ["k1:alice,k2:+approver", "entry 2", 'empty owner before "+approver"'],
    ["bad key:alice", "entry 1", "whitespace"],
  ])("refuses %j, naming the entry", (text, entry, problem) => {
    let error: unknown;
    try {
      parseApiKeys(text);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(SkillboxError);
    expect((error as SkillboxError).code).toBe("API_KEYS_INVALID");
    expect((error as SkillboxError).message).toContain(entry);
    expect((error as SkillboxError).message).toContain(problem);
  });

  it("never prints a whole key in its error", () => {
    expect(() => parseApiKeys("a-secret-key-without-owner")).toThrow(/"a-se…"/);
    expect(() => parseApiKeys("a-secret-key-without-owner")).not.toThrow(/secret/);
  });
});

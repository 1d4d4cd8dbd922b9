import { randomUUID } from "node:crypto";
import { SendMessageRequest } from "@a2a-js/sdk";
import {
  type Client,
  type ClientConfig,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import type { SkillContext, SkillRegistration } from "@skillbox/core";
import { afterEach } from "vitest";
import { createTemporaryHost, type TemporaryHost } from "../../../../test/helpers/temporary-host.js";
import {
  createHttpApp,
  type HttpAppOptions,
  type RunningHttpServer,
  startHttpServer,
} from "../../src/index.js";

/** A Skillbox server on 127.0.0.1 over a real SQLite host, with the test skills' handlers. */
export interface A2aTestServer {
  host: TemporaryHost;
  server: RunningHttpServer;
  /** An SDK client built from the agent card, sending `key` as a Bearer token when given. */
  client(options?: { key?: string; config?: ClientConfig }): Promise<Client>;
}

/** A skill registration with the `{ msg }` → `{ echoed }` schemas, owned by `system` by default. */
export function testSkill(
  overrides: Partial<SkillRegistration> & Pick<SkillRegistration, "name">,
): SkillRegistration {
  return {
    version: "1.0.0",
    description: `The ${overrides.name} test skill`,
    input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
    output: { type: "object", properties: { echoed: { type: "string" } } },
    handler: "echo",
    apiKeyId: "system",
    ...overrides,
  };
}

/** `message/send` parameters: `parts` as A2A v1.0 JSON (`{ text }`, `{ data }`), `metadata` on the message. */
export function messageRequest(
  parts: Record<string, unknown>[],
  metadata?: Record<string, unknown>,
  message: Record<string, unknown> = {},
): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: "ROLE_USER", parts, metadata, ...message },
  });
}

/** A fetch that adds `Authorization: Bearer <key>`. */
export function fetchWithKey(key: string | undefined): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (key !== undefined) headers.set("authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * Registers an `afterEach` closing every server and host started through the returned function,
 * which starts `createHttpApp` on 127.0.0.1, port 0, over a fresh host whose executor has the
 * handlers `echo` (`{ msg }` → `{ echoed }`), `fail` (throws) and `slow` (waits for its signal).
 */
export function useA2aTestServer(): (
  options?: Omit<HttpAppOptions, "registry" | "executor">,
) => Promise<A2aTestServer> {
  const started: A2aTestServer[] = [];
  afterEach(async () => {
    for (const running of started.splice(0)) {
      await running.server.close();
      await running.host.dispose();
    }
  });
  return async (options = {}) => {
    const host = createTemporaryHost();
    host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
    host.executor.registerHandler("fail", () => {
      throw new Error("the test skill failed on purpose");
    });
    host.executor.registerHandler("slow", (_input: unknown, context: SkillContext) =>
      waitForAbort(context.signal),
    );
    let server: RunningHttpServer;
    try {
      const app = createHttpApp({ registry: host.registry, executor: host.executor, ...options });
      server = await startHttpServer({
        fetch: app.fetch,
        port: 0,
        apiKeysConfigured: Object.keys(options.apiKeys ?? {}).length > 0,
      });
    } catch (error) {
      await host.dispose();
      throw error;
    }
    const running: A2aTestServer = {
      host,
      server,
      client({ key, config } = {}) {
        const factory = new ClientFactory(
          ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
            transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithKey(key) })],
            ...(config === undefined ? {} : { clientConfig: config }),
          }),
        );
        return factory.createFromUrl(server.url);
      },
    };
    started.push(running);
    return running;
  };
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

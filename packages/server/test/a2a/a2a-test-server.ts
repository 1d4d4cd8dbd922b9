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
import type { HttpAppOptions } from "../../src/index.js";
import { type TestApi, useTestApi } from "../http-test-api.js";

/** A Skillbox server on 127.0.0.1 over a real SQLite host, with the test skills' handlers. */
export interface A2aTestServer extends TestApi {
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
function fetchWithKey(key: string | undefined): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (key !== undefined) headers.set("authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * Registers an `afterEach` closing every server and host started through the returned function,
 * which starts a {@link TestApi} (whose executor has the `echo` handler, `{ msg }` → `{ echoed }`)
 * and adds the handlers `fail` (throws) and `slow` (waits for its signal).
 */
export function useA2aTestServer(): (
  options?: Omit<HttpAppOptions, "registry" | "executor">,
) => Promise<A2aTestServer> {
  const startApi = useTestApi();
  return async (options = {}) => {
    const api = await startApi(options);
    api.host.executor.registerHandler("fail", () => {
      throw new Error("the test skill failed on purpose");
    });
    api.host.executor.registerHandler("slow", (_input: unknown, context: SkillContext) =>
      waitForAbort(context.signal),
    );
    return {
      ...api,
      client: (clientOptions) => createA2aClient(api.server.url, clientOptions),
    };
  };
}

/** An SDK client built from the agent card at `url`, sending `key` as a Bearer token when given. */
export function createA2aClient(
  url: string,
  { key, config }: { key?: string; config?: ClientConfig } = {},
): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithKey(key) })],
      ...(config === undefined ? {} : { clientConfig: config }),
    }),
  );
  return factory.createFromUrl(url);
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

import type { SkillHostOptions, SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach } from "vitest";
import { createHttpApp, type HttpAppOptions, type RunningHttpServer, startHttpServer } from "../src/index.js";

/** What `call()` returns: the status, the parsed JSON body (null when empty) and the headers. */
export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of arbitrary response bodies.
  body: any;
  headers: Headers;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Sent as JSON with `Content-Type: application/json`. */
  json?: unknown;
  headers?: Record<string, string>;
  body?: RequestInit["body"];
  signal?: AbortSignal;
}

/** A real server over a real SQLite file, as the tests use it. */
export interface TestApi {
  host: TemporaryHost;
  server: RunningHttpServer;
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  /**
   * Resolves once a request for `path` (path and query, exactly) has reached the app — for a test
   * that must know a long request is being served before it acts.
   */
  arrival(path: string): Promise<void>;
}

/** The echo skill most tests run: `{ msg }` in, `{ echoed }` out. */
export function echoSkill(overrides: Partial<SkillRegistration> = {}): SkillRegistration {
  return {
    name: "echo",
    version: "1.0.0",
    description: "Returns the message",
    schema: {
      input: {
        type: "object",
        properties: { msg: { type: "string" } },
        required: ["msg"],
        additionalProperties: false,
      },
      output: { type: "object", properties: { echoed: { type: "string" } } },
    },
    handler: "echo",
    tags: ["demo"],
    apiKeyId: "public",
    ...overrides,
  };
}

/**
 * Registers an `afterEach` that closes every server and host started through the returned
 * function, and returns that function: it starts `createHttpApp` on 127.0.0.1, port 0, over a
 * fresh temporary host (made with `hostOptions`) whose executor has the `echo` handler.
 */
export function useTestApi(): (
  options?: Omit<HttpAppOptions, "registry" | "executor">,
  hostOptions?: Omit<SkillHostOptions, "database">,
) => Promise<TestApi> {
  const started: TestApi[] = [];
  afterEach(async () => {
    for (const api of started.splice(0)) {
      await api.server.close();
      await api.host.dispose();
    }
  });
  return async (options = {}, hostOptions = {}) => {
    const host = createTemporaryHost(hostOptions);
    host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
    const app = createHttpApp({ registry: host.registry, executor: host.executor, ...options });
    const arrivals = new Map<string, () => void>();
    // The adapter passes its bindings (the Node request, for the client's signal) as a second argument.
    const fetchThrough = (request: Request, bindings?: unknown) => {
      const url = new URL(request.url);
      arrivals.get(url.pathname + url.search)?.();
      return app.fetch(request, bindings);
    };
    let server: RunningHttpServer;
    try {
      server = await startHttpServer({
        fetch: fetchThrough as (request: Request) => Response | Promise<Response>,
        port: 0,
        apiKeysConfigured: Object.keys(options.apiKeys ?? {}).length > 0,
      });
    } catch (error) {
      await host.dispose();
      throw error;
    }
    const api: TestApi = {
      host,
      server,
      arrival(path) {
        return new Promise<void>((resolve) => arrivals.set(path, resolve));
      },
      async call(method, path, callOptions = {}) {
        const headers: Record<string, string> = { ...callOptions.headers };
        if (callOptions.key !== undefined) headers.authorization = `Bearer ${callOptions.key}`;
        if (callOptions.json !== undefined) headers["content-type"] ??= "application/json";
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers,
          body: callOptions.json === undefined ? callOptions.body : JSON.stringify(callOptions.json),
          signal: callOptions.signal,
          ...(callOptions.body instanceof ReadableStream ? { duplex: "half" } : {}),
        } as RequestInit);
        const text = await response.text();
        return {
          status: response.status,
          body: text === "" ? null : JSON.parse(text),
          headers: response.headers,
        };
      },
    };
    started.push(api);
    return api;
  };
}

import { defineInterceptor, type SkillHost } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import createRedactInterceptor, { DEFAULT_REDACTED_KEYS, type RedactOptions } from "../index.ts";

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with redact installed and a `login` skill that returns its input plus a session token. */
function hostWithRedact(options?: RedactOptions): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  host.executor.use(createRedactInterceptor(options));
  register(host, "login");
  host.executor.registerHandler("login", (input: Record<string, unknown>) => ({
    user: input.user,
    session: { accessToken: "at-123", RefreshToken: "rt-456", expiresIn: 3600 },
    headers: [{ Authorization: "Bearer xyz", accept: "json" }],
  }));
  return host;
}

function register(host: SkillHost, name: string): void {
  host.registry.register({ name, version: "1.0.0", handler: name, apiKeyId: "public" });
}

describe("redact plugin", () => {
  it("masks default keys at any depth in the stored input and output, case-insensitively", async () => {
    const host = hostWithRedact();
    const input = {
      user: "ada",
      PASSWORD: "hunter2",
      profile: { apiKey: "k-1", nested: [{ secret: { deep: "value" } }, { token: "t-1", keep: 1 }] },
    };

    const execution = await host.executor.execute("login", input);
    const stored = await host.executor.getExecution(execution.id);

    expect(stored?.input).toEqual({
      user: "ada",
      PASSWORD: "[REDACTED]",
      profile: { apiKey: "[REDACTED]", nested: [{ secret: "[REDACTED]" }, { token: "[REDACTED]", keep: 1 }] },
    });
    expect(stored?.output).toEqual({
      user: "ada",
      session: { accessToken: "[REDACTED]", RefreshToken: "[REDACTED]", expiresIn: 3600 },
      headers: [{ Authorization: "[REDACTED]", accept: "json" }],
    });
  });

  it("returns the real output to the caller and leaves the caller's input untouched", async () => {
    const host = hostWithRedact();
    const input = { user: "ada", password: "hunter2" };

    const execution = await host.executor.execute("login", input);

    expect(input.password).toBe("hunter2");
    expect(execution.output).toMatchObject({
      session: { accessToken: "at-123", RefreshToken: "rt-456" },
      headers: [{ Authorization: "Bearer xyz" }],
    });
  });

  it("uses the configured keys and mask instead of the defaults", async () => {
    const host = hostWithRedact({ keys: ["USER"], mask: "***" });

    const execution = await host.executor.execute("login", { user: "ada", password: "hunter2" });
    const stored = await host.executor.getExecution(execution.id);

    expect(stored?.input).toEqual({ user: "***", password: "hunter2" });
    expect(stored?.output).toMatchObject({ user: "***", session: { accessToken: "at-123" } });
  });

  it("masks what other interceptors' audit hooks add, because it applies last", async () => {
    const host = hostWithRedact();
    host.executor.use(
      defineInterceptor({
        name: "annotate",
        order: 1000,
        audit(_context, entry) {
          return "input" in entry ? { input: { wrapped: entry.input, token: "added-by-audit" } } : entry;
        },
      }),
    );

    const execution = await host.executor.execute("login", { user: "ada" });

    expect((await host.executor.getExecution(execution.id))?.input).toEqual({
      wrapped: { user: "ada" },
      token: "[REDACTED]",
    });
  });

  it("keeps values that serialise through toJSON and marks cycles", async () => {
    const host = createTemporaryHost();
    hosts.push(host);
    host.executor.use(createRedactInterceptor());
    register(host, "odd");
    const when = new Date(0);
    host.executor.registerHandler("odd", () => {
      const looped: Record<string, unknown> = { password: "p" };
      looped.self = looped;
      return { when, looped };
    });

    const execution = await host.executor.execute("odd", {});

    expect((await host.executor.getExecution(execution.id))?.output).toEqual({
      when: when.toISOString(),
      looped: { password: "[REDACTED]", self: "[Circular]" },
    });
  });

  it("stores input nested under a `__proto__` key, masked like any other object", async () => {
    const host = createTemporaryHost();
    hosts.push(host);
    host.executor.use(createRedactInterceptor());
    register(host, "sees");
    let seen: unknown;
    host.executor.registerHandler("sees", (input: Record<string, unknown>) => {
      seen = input;
      return JSON.parse('{"__proto__":{"token":"t-1","kept":true}}');
    });
    const input = JSON.parse('{"a":1,"__proto__":{"secret":"x","visible":"y"}}');

    const execution = await host.executor.execute("sees", input);
    const stored = await host.executor.getExecution(execution.id);

    // The handler got an own property named `__proto__`, not a prototype.
    expect(Object.hasOwn(seen as object, "__proto__")).toBe(true);
    expect(JSON.stringify(stored?.input)).toBe('{"a":1,"__proto__":{"secret":"[REDACTED]","visible":"y"}}');
    expect(Object.hasOwn(stored?.input as object, "__proto__")).toBe(true);
    expect(JSON.stringify(stored?.output)).toBe('{"__proto__":{"token":"[REDACTED]","kept":true}}');
    // What the caller holds is untouched.
    expect(JSON.stringify(input)).toBe('{"a":1,"__proto__":{"secret":"x","visible":"y"}}');
  });

  it("exports the default key list", () => {
    expect(DEFAULT_REDACTED_KEYS).toEqual([
      "password",
      "token",
      "apiKey",
      "secret",
      "authorization",
      "accessToken",
      "refreshToken",
    ]);
  });

  it("names the option when options are malformed", () => {
    expect(() => createRedactInterceptor({ keys: "password" as unknown as string[] })).toThrow(
      expect.objectContaining({
        code: "MANIFEST_INVALID",
        message: expect.stringContaining('interceptor "redact" options: `keys`'),
      }),
    );
  });
});

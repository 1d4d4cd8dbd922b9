import { readFileSync } from "node:fs";
import type { SkillHost, SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import createTimingInterceptor, { type TimingOptions } from "../timing/index.ts";

const manifest = JSON.parse(readFileSync(new URL("../timing/interceptor.json", import.meta.url), "utf8")) as {
  name: string;
  order: number;
  options: TimingOptions;
};

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

function newHost(): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  return host;
}

function register(host: SkillHost, registration: Partial<SkillRegistration> & { name: string }): void {
  host.registry.register({
    version: "1.0.0",
    handler: registration.name,
    apiKeyId: "public",
    ...registration,
  });
}

describe("timing example plugin", () => {
  it("agrees with its manifest on name and order", () => {
    const interceptor = createTimingInterceptor(manifest.options);
    expect(interceptor.name).toBe(manifest.name);
    expect(interceptor.order).toBe(manifest.order);
  });

  it("adds durationMs to the output of skills tagged timed", async () => {
    const host = newHost();
    host.executor.use(createTimingInterceptor(manifest.options));
    register(host, { name: "slow", tags: ["timed"] });
    host.executor.registerHandler("slow", async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { done: true };
    });

    const execution = await host.executor.execute("slow", {});

    expect(execution.output).toEqual({ done: true, durationMs: expect.any(Number) });
    expect(execution.output.durationMs).toBeGreaterThanOrEqual(15);
  });

  it("leaves untagged skills and non-object outputs alone", async () => {
    const host = newHost();
    host.executor.use(createTimingInterceptor());
    register(host, { name: "plain" });
    register(host, { name: "count", tags: ["timed"] });
    host.executor.registerHandler("plain", () => ({ done: true }));
    host.executor.registerHandler("count", () => 42);

    expect((await host.executor.execute("plain", {})).output).toEqual({ done: true });
    expect((await host.executor.execute("count", {})).output).toBe(42);
  });

  it("uses the configured field and tags", async () => {
    const host = newHost();
    host.executor.use(createTimingInterceptor({ field: "elapsed", tags: ["measured"] }));
    register(host, { name: "work", tags: ["measured"] });
    host.executor.registerHandler("work", () => ({}));

    expect((await host.executor.execute("work", {})).output).toEqual({ elapsed: expect.any(Number) });
  });

  it("names the option when options are malformed", () => {
    expect(() => createTimingInterceptor({ field: "" })).toThrow("`options.field`");
    expect(() => createTimingInterceptor({ tags: "timed" as unknown as string[] })).toThrow("`options.tags`");
  });
});

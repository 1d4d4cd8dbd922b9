import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createConsoleLogger } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import createLoggerInterceptor from "../index.ts";

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host whose logger collects its JSON lines, with the logger interceptor writing to `destination: "log"`. */
function hostLoggingTo(level: "info" | "warn"): { host: TemporaryHost; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const host = createTemporaryHost({
    logger: createConsoleLogger({ level, write: (line) => lines.push(JSON.parse(line)) }),
  });
  hosts.push(host);
  host.executor.use(createLoggerInterceptor({ destination: "log" }));
  host.registry.register({ name: "echo", version: "1.0.0", handler: "echo", apiKeyId: "public" });
  host.registry.register({ name: "broken", version: "1.0.0", handler: "broken", apiKeyId: "public" });
  host.executor.registerHandler("echo", () => ({ ok: true }));
  host.executor.registerHandler("broken", () => {
    throw new Error("boom");
  });
  return { host, lines };
}

describe('logger plugin, destination "log"', () => {
  it("hands one info record per execution to the host's logger, whatever the outcome", async () => {
    const { host, lines } = hostLoggingTo("info");
    const ok = await host.executor.execute("echo", {});
    const failed = await host.executor.execute("broken", {});
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        message: "skill execution",
        executionId: ok.id,
        status: "success",
        code: null,
        severity: "info",
        attempts: 1,
      }),
      expect.objectContaining({
        level: "info",
        message: "skill execution",
        executionId: failed.id,
        status: "error",
        code: "HANDLER_ERROR",
        severity: "error",
      }),
    ]);
  });

  it("is left out by a host logging warnings and errors only (what skillbox run and test do)", async () => {
    const { host, lines } = hostLoggingTo("warn");
    await host.executor.execute("echo", {});
    await host.executor.execute("broken", {});
    expect(lines).toEqual([]);
  });

  it("is what the plugin's interceptor.json asks for", () => {
    const manifest = JSON.parse(
      readFileSync(fileURLToPath(new URL("../interceptor.json", import.meta.url)), "utf8"),
    ) as { options: { destination: string } };
    expect(manifest.options.destination).toBe("log");
  });
});

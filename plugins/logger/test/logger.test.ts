import { defineInterceptor, deny, type SkillHost, type SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import createLoggerInterceptor, { type ExecutionLogLine, type LoggerOptions } from "../index.ts";

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with the logger installed; `lines` collects what it writes. */
function hostWithLogger(options: LoggerOptions = {}): { host: TemporaryHost; lines: string[] } {
  const host = createTemporaryHost();
  hosts.push(host);
  const lines: string[] = [];
  host.executor.use(createLoggerInterceptor({ ...options, write: (line) => lines.push(line) }));
  return { host, lines };
}

/** Registers a skill whose handler name equals its name. */
function register(host: SkillHost, registration: Partial<SkillRegistration> & { name: string }): void {
  host.registry.register({
    version: "1.0.0",
    handler: registration.name,
    apiKeyId: "public",
    ...registration,
  });
}

function parse(lines: string[]): ExecutionLogLine[] {
  return lines.map((line) => JSON.parse(line) as ExecutionLogLine);
}

describe("logger plugin", () => {
  it("writes one JSON line with the execution's fields on success", async () => {
    const { host, lines } = hostWithLogger();
    register(host, { name: "echo" });
    host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));

    const execution = await host.executor.execute(
      "echo",
      { msg: "hi" },
      { apiKeyId: "user-1", sessionId: "s-1" },
    );

    expect(lines).toHaveLength(1);
    const [line] = parse(lines);
    expect(line).toEqual({
      time: expect.any(String),
      level: "info",
      message: "skill execution",
      skill: "echo",
      version: "1.0.0",
      executionId: execution.id,
      parentExecutionId: null,
      apiKeyId: "user-1",
      sessionId: "s-1",
      status: "success",
      code: null,
      durationMs: expect.any(Number),
      attempts: 1,
    });
    expect(Number.isNaN(Date.parse(line!.time))).toBe(false);
    expect(line!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("writes one error line with the code when the handler fails", async () => {
    const { host, lines } = hostWithLogger();
    register(host, { name: "broken", retry: { maxAttempts: 2, initialDelayMs: 1 } });
    host.executor.registerHandler("broken", () => {
      throw new Error("boom");
    });

    const execution = await host.executor.execute("broken", {});

    expect(execution.status).toBe("error");
    expect(lines).toHaveLength(1);
    expect(parse(lines)[0]).toMatchObject({
      level: "error",
      skill: "broken",
      executionId: execution.id,
      status: "error",
      code: "HANDLER_ERROR",
      attempts: 2,
    });
  });

  it("logs a denial by an interceptor inside it as status denied", async () => {
    const { host, lines } = hostWithLogger();
    register(host, { name: "echo" });
    host.executor.registerHandler("echo", () => ({}));
    host.executor.use(
      defineInterceptor({
        name: "gate",
        before() {
          throw deny("not today");
        },
      }),
    );

    const execution = await host.executor.execute("echo", {});

    expect(execution.status).toBe("denied");
    expect(parse(lines)).toEqual([
      expect.objectContaining({ level: "warn", status: "denied", code: "DENIED" }),
    ]);
  });

  it("records the parent of nested executions, one line each", async () => {
    const { host, lines } = hostWithLogger();
    register(host, { name: "inner" });
    register(host, { name: "outer" });
    host.executor.registerHandler("inner", () => ({ value: 1 }));
    host.executor.registerHandler("outer", (_input, context) => context.call("inner", {}));

    const execution = await host.executor.execute("outer", {});

    const logged = parse(lines);
    expect(logged.map((line) => line.skill)).toEqual(["inner", "outer"]);
    expect(logged[0]!.parentExecutionId).toBe(execution.id);
    expect(logged[1]!.parentExecutionId).toBeNull();
  });

  it("writes only lines at or above the configured level", async () => {
    const { host, lines } = hostWithLogger({ level: "error" });
    register(host, { name: "echo" });
    register(host, { name: "broken" });
    host.executor.registerHandler("echo", () => ({}));
    host.executor.registerHandler("broken", () => {
      throw new Error("boom");
    });

    await host.executor.execute("echo", {});
    await host.executor.execute("broken", {});

    expect(parse(lines).map((line) => line.skill)).toEqual(["broken"]);
  });

  it("never fails an execution when writing throws", async () => {
    const host = createTemporaryHost();
    hosts.push(host);
    host.executor.use(
      createLoggerInterceptor({
        write: () => {
          throw new Error("disk full");
        },
      }),
    );
    register(host, { name: "echo" });
    host.executor.registerHandler("echo", () => ({ ok: true }));

    const execution = await host.executor.execute("echo", {});

    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({ ok: true });
  });

  it("writes a single error line when output validation fails after the after hooks", async () => {
    const { host, lines } = hostWithLogger();
    register(host, {
      name: "liar",
      schema: { input: {}, output: { type: "object", required: ["echoed"] } },
    });
    host.executor.registerHandler("liar", () => ({}));

    const execution = await host.executor.execute("liar", {});

    expect(execution.error?.code).toBe("OUTPUT_INVALID");
    const forExecution = parse(lines).filter((line) => line.executionId === execution.id);
    expect(forExecution).toHaveLength(1);
    expect(forExecution[0]).toMatchObject({ status: "error", code: "OUTPUT_INVALID" });
  });

  // Regression: with after/onError, an inner interceptor's recovery left the execution unlogged.
  it("logs an execution that an inner interceptor recovered, as the success it became", async () => {
    const { host, lines } = hostWithLogger();
    register(host, { name: "flaky" });
    host.executor.registerHandler("flaky", () => {
      throw new Error("down");
    });
    host.executor.use(
      defineInterceptor({ name: "fallback", order: 10, onError: () => ({ output: { cached: true } }) }),
    );

    const execution = await host.executor.execute("flaky", {});

    expect(execution.status).toBe("success");
    expect(parse(lines)).toEqual([
      expect.objectContaining({ executionId: execution.id, status: "success", code: null }),
    ]);
  });

  it("names the option when options are malformed", () => {
    expect(() => createLoggerInterceptor({ destination: "file" as "stdout" })).toThrow(
      expect.objectContaining({
        code: "MANIFEST_INVALID",
        message: expect.stringContaining('interceptor "logger" options: `destination`'),
      }),
    );
  });

  it("writes to stderr by default", async () => {
    const host = createTemporaryHost();
    hosts.push(host);
    const written: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      host.executor.use(createLoggerInterceptor());
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => ({}));
      await host.executor.execute("echo", {});
    } finally {
      process.stderr.write = original;
    }
    const lines = written.filter((chunk) => chunk.includes('"skill execution"'));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith("\n")).toBe(true);
    expect(JSON.parse(lines[0]!)).toMatchObject({ skill: "echo", status: "success" });
  });
});

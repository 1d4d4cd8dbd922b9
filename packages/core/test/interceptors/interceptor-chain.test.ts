import {
  type AuditEntry,
  createSkillHost,
  defineInterceptor,
  deny,
  type Interceptor,
  type Skill,
  SkillboxError,
  type SkillExecution,
  type SkillHost,
  type SkillHostOptions,
  type SkillRegistration,
} from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { InterceptorChain } from "../../src/interceptors/interceptor-chain.js";

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

function newHost(options: Omit<SkillHostOptions, "database"> = {}): TemporaryHost {
  const host = createTemporaryHost(options);
  hosts.push(host);
  return host;
}

/** Registers a skill whose handler name equals its name. */
function register(host: SkillHost, registration: Partial<SkillRegistration> & { name: string }): Skill {
  return host.registry.register({
    version: "1.0.0",
    handler: registration.name,
    apiKeyId: "public",
    ...registration,
  });
}

/** An interceptor that records each hook call as `<hook>:<name>` in `trace`. */
function tracing(name: string, trace: string[], order?: number): Interceptor {
  return defineInterceptor({
    name,
    ...(order === undefined ? {} : { order }),
    before() {
      trace.push(`before:${name}`);
      return undefined;
    },
    after() {
      trace.push(`after:${name}`);
      return undefined;
    },
    onError() {
      trace.push(`onError:${name}`);
      return undefined;
    },
  });
}

/** A skill as the chain sees it, for unit tests of matching. */
function fakeSkill(name: string, tags: string[] = []): Skill {
  return {
    id: `id-${name}-${tags.join(",")}`,
    name,
    version: "1.0.0",
    description: "",
    apiKeyId: "system",
    schema: { input: {} },
    handler: name,
    runtime: "inline",
    tags,
    enabled: true,
    source: "api",
    contentHash: `hash-${name}-${tags.join(",")}`,
    createdAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString(),
  };
}

describe("defineInterceptor", () => {
  it("returns the interceptor object itself", () => {
    const hooks = { name: "noop", order: 3, before: () => undefined };
    const interceptor = defineInterceptor(hooks);
    expect(interceptor).toBe(hooks);
    expect(interceptor.order).toBe(3);
  });

  it("defines an interceptor the executor runs", async () => {
    const host = newHost();
    register(host, { name: "echo" });
    host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
    host.executor.use(
      defineInterceptor({
        name: "shout",
        after(_context, result) {
          const output = result.output as { echoed: string };
          return { output: { echoed: output.echoed.toUpperCase() } };
        },
      }),
    );
    const execution = await host.executor.execute("echo", { msg: "hi" });
    expect(execution.output).toEqual({ echoed: "HI" });
  });
});

describe("InterceptorChain", () => {
  it("lists interceptors by ascending order, ties in registration order", () => {
    const chain = new InterceptorChain();
    chain.use({ name: "late", order: 10 });
    chain.use({ name: "first-default" });
    chain.use({ name: "early", order: -5 });
    chain.use({ name: "second-default", order: 0 });
    expect(chain.list().map((interceptor) => interceptor.name)).toEqual([
      "early",
      "first-default",
      "second-default",
      "late",
    ]);
  });

  it("replaces an interceptor registered again under the same name", () => {
    const chain = new InterceptorChain();
    chain.use({ name: "a", order: 1 });
    chain.use({ name: "b", order: 2 });
    chain.use({ name: "a", order: 3 });
    expect(chain.list().map((interceptor) => [interceptor.name, interceptor.order])).toEqual([
      ["b", 2],
      ["a", 3],
    ]);
  });

  it("rejects an interceptor without a name or with a non-finite order", () => {
    const chain = new InterceptorChain();
    expect(() => chain.use({ name: "" })).toThrow(SkillboxError);
    expect(() => chain.use({ name: "nan", order: Number.NaN })).toThrow(/order/);
    try {
      chain.use({ name: "infinite", order: Number.POSITIVE_INFINITY });
      expect.unreachable();
    } catch (error) {
      expect((error as SkillboxError).code).toBe("REGISTRATION_INVALID");
    }
    expect(chain.list()).toEqual([]);
  });

  it("removes an interceptor by name and reports whether one was removed", () => {
    const chain = new InterceptorChain();
    chain.use({ name: "a" });
    expect(chain.remove("a")).toBe(true);
    expect(chain.remove("a")).toBe(false);
    expect(chain.list()).toEqual([]);
  });

  it("selects interceptors for a skill by name glob, tags, both, or a predicate", () => {
    const chain = new InterceptorChain();
    chain.use({ name: "everything" });
    chain.use({ name: "github", match: { names: "github.*" } });
    chain.use({ name: "several-names", match: { names: ["echo", "weather.*"] } });
    chain.use({ name: "network", match: { tags: ["network", "http"] } });
    chain.use({ name: "github-network", match: { names: "github.*", tags: ["network"] } });
    chain.use({ name: "predicate", match: (skill) => skill.name.length === 4 });
    const names = (skill: Skill) => chain.forSkill(skill).map((interceptor) => interceptor.name);
    expect(names(fakeSkill("github.issues"))).toEqual(["everything", "github"]);
    expect(names(fakeSkill("github.issues", ["network"]))).toEqual([
      "everything",
      "github",
      "network",
      "github-network",
    ]);
    expect(names(fakeSkill("gitlab.issues", ["http"]))).toEqual(["everything", "network"]);
    expect(names(fakeSkill("github"))).toEqual(["everything"]);
    expect(names(fakeSkill("echo"))).toEqual(["everything", "several-names", "predicate"]);
    expect(names(fakeSkill("weather.today", ["demo"]))).toEqual(["everything", "several-names"]);
  });

  it("recomputes the interceptors of a skill after the chain changes", () => {
    const chain = new InterceptorChain();
    const skill = fakeSkill("echo");
    chain.use({ name: "a" });
    expect(chain.forSkill(skill).map((interceptor) => interceptor.name)).toEqual(["a"]);
    chain.use({ name: "b", order: -1 });
    expect(chain.forSkill(skill).map((interceptor) => interceptor.name)).toEqual(["b", "a"]);
    chain.remove("a");
    expect(chain.forSkill(skill).map((interceptor) => interceptor.name)).toEqual(["b"]);
  });
});

describe("SkillExecutor", () => {
  describe("use", () => {
    it("runs before hooks lowest order first and after hooks in reverse, around the handler", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      const trace: string[] = [];
      host.executor.registerHandler("echo", () => {
        trace.push("handler");
        return "ok";
      });
      host.executor.use(tracing("ten", trace, 10));
      host.executor.use(tracing("minus-five", trace, -5));
      host.executor.use(tracing("default", trace));
      const execution = await host.executor.execute("echo", {});
      expect(execution.status).toBe("success");
      expect(trace).toEqual([
        "before:minus-five",
        "before:default",
        "before:ten",
        "handler",
        "after:ten",
        "after:default",
        "after:minus-five",
      ]);
    });

    it("runs onError hooks in reverse order when the handler fails", async () => {
      const host = newHost();
      register(host, { name: "broken" });
      const trace: string[] = [];
      host.executor.registerHandler("broken", () => {
        trace.push("handler");
        throw new Error("broken");
      });
      host.executor.use(tracing("outer", trace, 1));
      host.executor.use(tracing("inner", trace, 2));
      const execution = await host.executor.execute("broken", {});
      expect(execution.status).toBe("error");
      expect(trace).toEqual(["before:outer", "before:inner", "handler", "onError:inner", "onError:outer"]);
    });

    it("keeps registration order among interceptors with the same order", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      const trace: string[] = [];
      host.executor.registerHandler("echo", () => "ok");
      host.executor.use(tracing("first", trace, 5));
      host.executor.use(tracing("second", trace, 5));
      await host.executor.execute("echo", {});
      expect(trace).toEqual(["before:first", "before:second", "after:second", "after:first"]);
    });

    it("runs interceptors given to createSkillHost", async () => {
      const trace: string[] = [];
      const host = newHost({ interceptors: [tracing("b", trace, 2), tracing("a", trace, 1)] });
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "ok");
      await host.executor.execute("echo", {});
      expect(trace).toEqual(["before:a", "before:b", "after:b", "after:a"]);
    });

    it("gives every hook the execution's context and a state shared across hooks", async () => {
      const host = newHost();
      const skill = register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "ok");
      const seen: Record<string, unknown> = {};
      host.executor.use({
        name: "first",
        order: 1,
        before(context) {
          context.state.startedBy = "first";
          seen.executionId = context.executionId;
          seen.skillId = context.skill.id;
          seen.apiKeyId = context.apiKeyId;
          seen.sessionId = context.sessionId;
          seen.parentExecutionId = context.parentExecutionId;
          seen.logger = typeof context.logger.info;
          return undefined;
        },
      });
      host.executor.use({
        name: "second",
        order: 2,
        after(context, result) {
          seen.state = { ...context.state };
          seen.attempts = result.attempts;
          seen.duration = result.duration;
          return undefined;
        },
      });
      const execution = await host.executor.execute("echo", {}, { apiKeyId: "me", sessionId: "s-1" });
      expect(seen).toMatchObject({
        executionId: execution.id,
        skillId: skill.id,
        apiKeyId: "me",
        sessionId: "s-1",
        parentExecutionId: null,
        logger: "function",
        state: { startedBy: "first" },
        attempts: 1,
      });
      expect(seen.duration).toBeGreaterThanOrEqual(0);
    });

    it("hands the handler the input a before hook rewrote", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      let received: unknown;
      host.executor.registerHandler("echo", (input: { msg: string }) => {
        received = input;
        return { echoed: input.msg };
      });
      host.executor.use({
        name: "trim",
        order: 1,
        before: (context) => ({ input: { msg: (context.input as { msg: string }).msg.trim() } }),
      });
      host.executor.use({
        name: "suffix",
        order: 2,
        before: (context) => ({ input: { msg: `${(context.input as { msg: string }).msg}!` } }),
      });
      const execution = await host.executor.execute("echo", { msg: "  hello  " });
      expect(received).toEqual({ msg: "hello!" });
      expect(execution.output).toEqual({ echoed: "hello!" });
    });

    it("validates the input the handler will receive, after before hooks", async () => {
      const host = newHost();
      register(host, {
        name: "strict",
        schema: { input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
      });
      let calls = 0;
      host.executor.registerHandler("strict", () => {
        calls++;
        return "ran";
      });
      host.executor.use({
        name: "corrupt",
        before: () => ({ input: { n: "not a number" } }),
      });
      const execution = await host.executor.execute("strict", { n: 1 });
      expect(calls).toBe(0);
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("INPUT_INVALID");
    });

    it("short-circuits with { output }: the handler and later before hooks do not run", async () => {
      const host = newHost();
      register(host, { name: "expensive" });
      let calls = 0;
      const trace: string[] = [];
      host.executor.registerHandler("expensive", () => {
        calls++;
        return "computed";
      });
      host.executor.use({
        name: "cache",
        order: 1,
        before() {
          trace.push("before:cache");
          return { output: "cached" };
        },
      });
      host.executor.use({
        name: "inner",
        order: 2,
        before() {
          trace.push("before:inner");
          return undefined;
        },
      });
      const execution = await host.executor.execute("expensive", {});
      expect(calls).toBe(0);
      expect(trace).not.toContain("before:inner");
      expect(execution.status).toBe("success");
      expect(execution.output).toBe("cached");
      expect(execution.attempts).toBe(0);
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.status).toBe("success");
      expect(stored?.output).toBe("cached");
    });

    it("unwinds after a short-circuit only through the layers the execution passed", async () => {
      const host = newHost();
      register(host, { name: "expensive" });
      host.executor.registerHandler("expensive", () => "computed");
      const trace: string[] = [];
      host.executor.use(tracing("outer", trace, 0));
      host.executor.use({
        name: "cache",
        order: 1,
        before: () => ({ output: "cached" }),
      });
      host.executor.use(tracing("inner", trace, 2));
      const execution = await host.executor.execute("expensive", {});
      expect(execution.output).toBe("cached");
      // `inner` never saw the request (its before did not run), so its after must not run either.
      expect(trace).toEqual(["before:outer", "after:outer"]);
    });

    it("records status denied with code DENIED when a before hook throws deny()", async () => {
      const host = newHost();
      register(host, { name: "delete-repo" });
      let calls = 0;
      host.executor.registerHandler("delete-repo", () => {
        calls++;
        return "deleted";
      });
      host.executor.use({
        name: "policy",
        before(context) {
          if (context.apiKeyId !== "admin")
            throw deny("only admins may delete repositories", { rule: "admin" });
          return undefined;
        },
      });
      const denied = await host.executor.execute(
        "delete-repo",
        {},
        {
          apiKeyId: "intern",
          retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 },
        },
      );
      expect(calls).toBe(0);
      expect(denied.status).toBe("denied");
      expect(denied.output).toBeNull();
      expect(denied.error).toEqual({
        code: "DENIED",
        message: "only admins may delete repositories",
        data: { rule: "admin" },
      });
      const stored = await host.executor.getExecution(denied.id);
      expect(stored?.status).toBe("denied");
      expect(stored?.error?.code).toBe("DENIED");

      const allowed = await host.executor.execute("delete-repo", {}, { apiKeyId: "admin" });
      expect(allowed.status).toBe("success");
      expect(calls).toBe(1);
    });

    it("does not let onError recover a denial", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "ok");
      let sawCode: string | undefined;
      host.executor.use({
        name: "rescuer",
        order: 0,
        onError(_context, error) {
          sawCode = error.code;
          return { output: "rescued" };
        },
      });
      host.executor.use({
        name: "policy",
        order: 1,
        before() {
          throw deny("no");
        },
      });
      const execution = await host.executor.execute("echo", {});
      expect(sawCode).toBe("DENIED");
      expect(execution.status).toBe("denied");
      expect(execution.output).toBeNull();
    });

    it("lets after hooks transform the output, innermost first", async () => {
      const host = newHost();
      register(host, { name: "number" });
      host.executor.registerHandler("number", () => 2);
      host.executor.use({
        name: "outer",
        order: 1,
        after: (_context, result) => ({ output: `<${result.output}>` }),
      });
      host.executor.use({
        name: "inner",
        order: 2,
        after: (_context, result) => ({ output: (result.output as number) * 10 }),
      });
      host.executor.use({ name: "observer", order: 3, after: () => undefined });
      const execution = await host.executor.execute("number", {});
      expect(execution.output).toBe("<20>");
      expect((await host.executor.getExecution(execution.id))?.output).toBe("<20>");
    });

    it("validates the output after after hooks against the output schema", async () => {
      const host = newHost();
      register(host, { name: "typed", schema: { input: {}, output: { type: "number" } } });
      host.executor.registerHandler("typed", () => 1);
      host.executor.use({
        name: "stringify",
        after: (_context, result) => ({ output: String(result.output) }),
      });
      const execution = await host.executor.execute("typed", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUTPUT_INVALID");
    });

    it("lets onError recover a failure with an output", async () => {
      const host = newHost();
      register(host, { name: "weather" });
      host.executor.registerHandler("weather", () => {
        throw new Error("upstream down");
      });
      let seen: SkillboxError | undefined;
      host.executor.use({
        name: "fallback",
        onError(_context, error) {
          seen = error;
          return { output: { temperature: null, stale: true } };
        },
      });
      const execution = await host.executor.execute("weather", {});
      expect(seen).toBeInstanceOf(SkillboxError);
      expect(seen?.code).toBe("HANDLER_ERROR");
      expect(seen?.message).toContain("upstream down");
      expect(execution.status).toBe("success");
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ temperature: null, stale: true });
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.status).toBe("success");
      expect(stored?.error).toBeNull();
      expect(stored?.output).toEqual({ temperature: null, stale: true });
    });

    it("lets the error stand when onError returns nothing", async () => {
      const host = newHost();
      register(host, { name: "limited" });
      host.executor.registerHandler("limited", () => {
        throw new SkillboxError("RATE_LIMITED", "slow down");
      });
      const seen: string[] = [];
      host.executor.use({
        name: "observer",
        onError(_context, error) {
          seen.push(error.code);
          return undefined;
        },
      });
      const execution = await host.executor.execute("limited", {});
      expect(seen).toEqual(["RATE_LIMITED"]);
      expect(execution.status).toBe("error");
      expect(execution.error).toEqual({ code: "RATE_LIMITED", message: "slow down" });
    });

    it("lets onError see a timeout and recover from it", async () => {
      const host = newHost();
      register(host, { name: "slow", timeoutMs: 30 });
      host.executor.registerHandler("slow", () => new Promise(() => {}));
      host.executor.use({
        name: "fallback",
        onError: (_context, error) => (error.code === "TIMEOUT" ? { output: "fallback" } : undefined),
      });
      const execution = await host.executor.execute("slow", {});
      expect(execution.status).toBe("success");
      expect(execution.output).toBe("fallback");
    });

    it("stores what the audit hook returns while execute() returns the real input and output", async () => {
      const host = newHost();
      register(host, { name: "login" });
      let handlerInput: unknown;
      host.executor.registerHandler("login", (input: { user: string; password: string }) => {
        handlerInput = input;
        return { user: input.user, token: "secret-token" };
      });
      const redactor = defineInterceptor({
        name: "redact",
        audit(_context, entry) {
          const redacted: AuditEntry = {};
          if ("input" in entry) redacted.input = { ...(entry.input as object), password: "[redacted]" };
          if ("output" in entry) redacted.output = { ...(entry.output as object), token: "[redacted]" };
          return redacted;
        },
      });
      host.executor.use(redactor);
      const execution = await host.executor.execute("login", { user: "ada", password: "hunter2" });
      expect(handlerInput).toEqual({ user: "ada", password: "hunter2" });
      expect(execution.output).toEqual({ user: "ada", token: "secret-token" });
      expect(execution.input).toEqual({ user: "ada", password: "hunter2" });
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.input).toEqual({ user: "ada", password: "[redacted]" });
      expect(stored?.output).toEqual({ user: "ada", token: "[redacted]" });
      const listed = await host.executor.listExecutions({ skill: "login" });
      expect(JSON.stringify(listed)).not.toContain("hunter2");
      expect(JSON.stringify(listed)).not.toContain("secret-token");
    });

    it("redacts the stored input even when the execution fails", async () => {
      const host = newHost();
      register(host, { name: "login" });
      host.executor.registerHandler("login", () => {
        throw new Error("bad credentials");
      });
      host.executor.use({
        name: "redact",
        audit: (_context, entry) => ("input" in entry ? { input: "[redacted]" } : entry),
      });
      const execution = await host.executor.execute("login", { password: "hunter2" });
      expect(execution.status).toBe("error");
      expect((await host.executor.getExecution(execution.id))?.input).toBe("[redacted]");
    });

    it("stores a marker instead of the raw value when an audit hook throws", async () => {
      const host = newHost();
      register(host, { name: "login" });
      host.executor.registerHandler("login", () => ({ token: "secret-token" }));
      host.executor.use({
        name: "clumsy-redactor",
        audit() {
          throw new Error("oops");
        },
      });
      const execution = await host.executor.execute("login", { password: "hunter2" });
      expect(execution.status).toBe("success");
      expect(execution.output).toEqual({ token: "secret-token" });
      const stored = await host.executor.getExecution(execution.id);
      expect(JSON.stringify(stored)).not.toContain("hunter2");
      expect(JSON.stringify(stored)).not.toContain("secret-token");
      expect(stored?.input).toContain("clumsy-redactor");
      expect(stored?.output).toContain("clumsy-redactor");
    });

    it("applies an interceptor only to skills whose names match its glob", async () => {
      const host = newHost();
      for (const name of ["github.issues", "github.pulls", "gitlab.issues"]) {
        register(host, { name });
        host.executor.registerHandler(name, () => name);
      }
      const intercepted: string[] = [];
      host.executor.use({
        name: "github-only",
        match: { names: "github.*" },
        before(context) {
          intercepted.push(context.skill.name);
          return undefined;
        },
      });
      for (const name of ["github.issues", "github.pulls", "gitlab.issues"])
        await host.executor.execute(name, {});
      expect(intercepted).toEqual(["github.issues", "github.pulls"]);
    });

    it("applies an interceptor only to skills carrying one of its tags", async () => {
      const host = newHost();
      register(host, { name: "fetch-page", tags: ["network", "demo"] });
      register(host, { name: "add", tags: ["math"] });
      register(host, { name: "untagged" });
      for (const name of ["fetch-page", "add", "untagged"]) host.executor.registerHandler(name, () => name);
      const intercepted: string[] = [];
      host.executor.use({
        name: "network-guard",
        match: { tags: ["network", "filesystem"] },
        before(context) {
          intercepted.push(context.skill.name);
          return undefined;
        },
      });
      for (const name of ["fetch-page", "add", "untagged"]) await host.executor.execute(name, {});
      expect(intercepted).toEqual(["fetch-page"]);
    });

    it("applies a new interceptor to a skill that has already run", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "plain");
      expect((await host.executor.execute("echo", {})).output).toBe("plain");
      host.executor.use({ name: "decorate", after: () => ({ output: "decorated" }) });
      expect((await host.executor.execute("echo", {})).output).toBe("decorated");
    });

    it("fails with INTERCEPTOR_FAILED naming the interceptor when before throws a plain Error, and keeps serving", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      let calls = 0;
      host.executor.registerHandler("echo", () => {
        calls++;
        return "ok";
      });
      let throws = true;
      host.executor.use({
        name: "buggy-plugin",
        before() {
          if (throws) {
            throws = false;
            throw new Error("cannot read properties of undefined (reading 'id')");
          }
          return undefined;
        },
      });
      const failed = await host.executor.execute("echo", {});
      expect(calls).toBe(0);
      expect(failed.status).toBe("error");
      expect(failed.error?.code).toBe("INTERCEPTOR_FAILED");
      expect(failed.error?.message).toContain("buggy-plugin");
      expect(failed.error?.message).toContain("cannot read properties of undefined");
      expect(failed.error?.data).toEqual({ interceptor: "buggy-plugin", hook: "before" });
      expect((await host.executor.getExecution(failed.id))?.error?.code).toBe("INTERCEPTOR_FAILED");

      const next = await host.executor.execute("echo", {});
      expect(next.status).toBe("success");
      expect(next.output).toBe("ok");
      expect(calls).toBe(1);
    });

    it("fails with INTERCEPTOR_FAILED when an after hook throws, without retrying the handler", async () => {
      const host = newHost();
      register(host, { name: "echo", retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 } });
      let calls = 0;
      host.executor.registerHandler("echo", () => {
        calls++;
        return "ok";
      });
      host.executor.use({
        name: "broken-after",
        async after() {
          throw new Error("metrics backend unreachable");
        },
      });
      const execution = await host.executor.execute("echo", {});
      expect(calls).toBe(1);
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("INTERCEPTOR_FAILED");
      expect(execution.error?.message).toContain('"broken-after"');
      expect(execution.error?.message).toContain("after");
    });

    it("records the failure of an onError hook that throws, naming it", async () => {
      const host = newHost();
      register(host, { name: "broken" });
      host.executor.registerHandler("broken", () => {
        throw new Error("handler failed");
      });
      host.executor.use({
        name: "broken-on-error",
        onError() {
          throw new Error("reporter crashed");
        },
      });
      const execution = await host.executor.execute("broken", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("INTERCEPTOR_FAILED");
      expect(execution.error?.message).toContain("broken-on-error");
      expect(execution.error?.message).toContain("reporter crashed");
    });

    it("keeps the code of a SkillboxError thrown by a before hook", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "ok");
      host.executor.use({
        name: "quota",
        before() {
          throw new SkillboxError("RATE_LIMITED", "quota exhausted");
        },
      });
      const execution = await host.executor.execute("echo", {});
      expect(execution.status).toBe("error");
      expect(execution.error).toEqual({ code: "RATE_LIMITED", message: "quota exhausted" });
    });

    it("keeps interceptors of one host away from another host", async () => {
      const host = newHost();
      const other = createSkillHost({
        database: host.database,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      try {
        register(host, { name: "echo" });
        host.executor.registerHandler("echo", () => "plain");
        other.executor.registerHandler("echo", () => "plain");
        host.executor.use({ name: "decorate", after: () => ({ output: "decorated" }) });
        expect((await host.executor.execute("echo", {})).output).toBe("decorated");
        expect((await other.executor.execute("echo", {})).output).toBe("plain");
      } finally {
        await other.close();
      }
    });
  });

  describe("onFinish", () => {
    it("sees the final record once, after every other hook, and cannot break the execution", async () => {
      const errors: string[] = [];
      const host = newHost({
        logger: { debug() {}, info() {}, warn() {}, error: (message) => errors.push(message) },
      });
      register(host, { name: "liar", schema: { input: {}, output: { type: "object", required: ["x"] } } });
      host.executor.registerHandler("liar", () => ({}));
      const seen: SkillExecution[] = [];
      host.executor.use(
        defineInterceptor({ name: "observer", onFinish: (_context, execution) => void seen.push(execution) }),
      );
      host.executor.use(
        defineInterceptor({
          name: "clumsy",
          onFinish() {
            throw new Error("observer bug");
          },
        }),
      );
      const execution = await host.executor.execute("liar", {});
      expect(execution.error?.code).toBe("OUTPUT_INVALID");
      expect(seen).toEqual([execution]);
      expect(errors).toEqual(['Interceptor "clumsy" failed in onFinish()']);
    });

    it("matches scoped skill names with * in match.names", () => {
      const chain = new InterceptorChain();
      chain.use(defineInterceptor({ name: "all", match: { names: "*" } }));
      expect(chain.forSkill(fakeSkill("@acme/weather"))).toHaveLength(1);
    });
  });

  describe("hook deadlines", () => {
    // Hooks ran outside every timeout: a hook that never settled hung execute() and close().
    it("fails an execution whose asynchronous hook never settles, naming the interceptor", async () => {
      const host = newHost();
      host.executor.interceptors.hookTimeoutMs = 50;
      register(host, { name: "echo" });
      let handlerCalled = false;
      host.executor.registerHandler("echo", () => {
        handlerCalled = true;
        return null;
      });
      host.executor.use(defineInterceptor({ name: "stuck", before: () => new Promise<undefined>(() => {}) }));
      const execution = await host.executor.execute("echo", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("INTERCEPTOR_FAILED");
      expect(execution.error?.message).toContain('"stuck"');
      expect(execution.error?.message).toContain("before()");
      expect(handlerCalled).toBe(false);
    });
  });

  describe("removeInterceptor", () => {
    it("stops running a removed interceptor and returns false for an unknown name", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "plain");
      host.executor.use({ name: "decorate", after: () => ({ output: "decorated" }) });
      expect((await host.executor.execute("echo", {})).output).toBe("decorated");
      expect(host.executor.removeInterceptor("decorate")).toBe(true);
      expect(host.executor.interceptors.list()).toEqual([]);
      expect((await host.executor.execute("echo", {})).output).toBe("plain");
      expect(host.executor.removeInterceptor("decorate")).toBe(false);
      expect(host.executor.removeInterceptor("never-registered")).toBe(false);
    });

    it("lets a denying interceptor be removed so executions go through again", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => "ok");
      host.executor.use({
        name: "lockdown",
        before() {
          throw deny("maintenance");
        },
      });
      expect((await host.executor.execute("echo", {})).status).toBe("denied");
      host.executor.removeInterceptor("lockdown");
      expect((await host.executor.execute("echo", {})).status).toBe("success");
    });
  });
});

import { SkillboxError } from "@skillbox/core";
import { executeToolCalls, extractToolCalls, type ToolCall } from "@skillbox/llm";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoSkill } from "./fixtures/echo-skill.js";

function call(id: string, name: string, toolArguments: unknown): ToolCall {
  const [extracted] = extractToolCalls(
    { content: [{ type: "tool_use", id, name, input: toolArguments }] },
    "anthropic",
  );
  return extracted as ToolCall;
}

let host: TemporaryHost;
let running = 0;
let mostRunning = 0;

beforeEach(() => {
  host = createTemporaryHost();
  running = 0;
  mostRunning = 0;
  host.executor.registerHandler("echo", (input: { msg: string }, context) => ({
    echoed: input.msg,
    version: context.skill.version,
  }));
  host.executor.registerHandler("shout", (input: string) => input.toUpperCase());
  host.executor.registerHandler("slow", async (input: { msg: string }) => {
    running += 1;
    mostRunning = Math.max(mostRunning, running);
    await new Promise((resolve) => setTimeout(resolve, 30));
    running -= 1;
    return input.msg;
  });
  host.executor.registerHandler("limited", () => {
    throw new SkillboxError("RATE_LIMITED", "slow down", { retryable: false });
  });
  host.registry.registerMany([
    echoSkill({ name: "echo" }),
    echoSkill({ name: "echo", version: "2.0.0" }),
    echoSkill({ name: "shout", handler: "shout", input: { type: "string", minLength: 1 } }),
    echoSkill({ name: "slow", handler: "slow" }),
    echoSkill({ name: "limited", handler: "limited" }),
    echoSkill({ name: "alice-only", apiKeyId: "alice" }),
    echoSkill({ name: `@long-organisation/${"very-long-skill-name-".repeat(4)}end` }),
  ]);
});

afterEach(async () => {
  await host.dispose();
});

describe("executeToolCalls", () => {
  it("runs skill calls as audited executions and leaves client tools alone, in the calls' order", async () => {
    const calls = [
      call("a", "get_time", {}),
      call("b", "echo", { msg: "latest" }),
      call("c", "echo_v1_0_0", { msg: "pinned" }),
      call("d", "shout", { input: "hey" }),
    ];
    const unpinned = await executeToolCalls(calls, {
      executor: host.executor,
      apiKeyId: "bob",
      sessionId: "s-1",
    });
    // Tools named as `toTools(skills, format, { pinVersions: true })` names them.
    const pinned = await executeToolCalls(calls, { executor: host.executor, pinVersions: true });
    const results = [unpinned[0], unpinned[1], pinned[2], unpinned[3]];
    expect(unpinned[2]).toMatchObject({ handled: false });
    expect(pinned[1]).toMatchObject({ handled: false });
    expect(results.map((result) => result?.call.id)).toEqual(["a", "b", "c", "d"]);
    expect(results[0]).toEqual({ call: calls[0], handled: false, ok: false });
    expect(results[1]).toMatchObject({
      handled: true,
      ok: true,
      output: { echoed: "latest", version: "2.0.0" },
    });
    expect(results[2]).toMatchObject({
      handled: true,
      ok: true,
      output: { echoed: "pinned", version: "1.0.0" },
    });
    expect(results[3]).toMatchObject({ handled: true, ok: true, output: "HEY" });
    const execution = await host.executor.getExecution(results[1]?.executionId as string);
    expect(execution).toMatchObject({
      apiKeyId: "bob",
      sessionId: "s-1",
      status: "success",
      skillVersion: "2.0.0",
    });
  });

  it("never runs another owner's offered skill, a missing version, an unoffered name or bad JSON", async () => {
    const [badJson] = extractToolCalls(
      {
        choices: [
          {
            message: {
              tool_calls: [{ id: "x", type: "function", function: { name: "echo", arguments: "{" } }],
            },
          },
        ],
      },
      "openai-chat",
    );
    // Offered as tools (alice's list, a version that is gone), then called as bob.
    const offered = [...host.registry.list("alice"), { name: "echo", version: "9.9.9" }];
    const calls = [call("a", "alice-only", { msg: "hi" }), badJson as ToolCall];
    const results = await executeToolCalls(calls, {
      executor: host.executor,
      apiKeyId: "bob",
      skills: offered,
    });
    const [missingVersion] = await executeToolCalls([call("b", "echo_v9_9_9", { msg: "hi" })], {
      executor: host.executor,
      skills: offered,
      pinVersions: true,
    });
    // Not among bob's visible skills, so not a skill tool at all: the client's to run.
    const [unoffered] = await executeToolCalls([calls[0] as ToolCall], {
      executor: host.executor,
      apiKeyId: "bob",
    });
    expect(
      [...results, missingVersion, unoffered].map((result) => [
        result?.handled,
        result?.ok,
        result?.error?.code,
      ]),
    ).toEqual([
      [true, false, "SKILL_NOT_FOUND"],
      [true, false, "TOOL_ARGUMENTS_INVALID"],
      [true, false, "SKILL_NOT_FOUND"],
      [false, false, undefined],
    ]);
    expect(await host.executor.countExecutions()).toBe(0);

    const [own] = await executeToolCalls([calls[0] as ToolCall], {
      executor: host.executor,
      apiKeyId: "alice",
    });
    expect(own).toMatchObject({ handled: true, ok: true, output: { echoed: "hi" } });
  });

  it("reports failed executions with their code and execution id", async () => {
    const results = await executeToolCalls(
      [call("a", "limited", { msg: "x" }), call("b", "echo", { wrong: 1 })],
      { executor: host.executor },
    );
    expect(results[0]).toMatchObject({
      handled: true,
      ok: false,
      error: { code: "RATE_LIMITED", message: "slow down" },
    });
    expect(results[0]?.executionId).toEqual(expect.any(String));
    expect(results[1]).toMatchObject({ handled: true, ok: false, error: { code: "INPUT_INVALID" } });
  });

  it("reads a cut long name through the caller's visible skills", async () => {
    const toolName = `long-organisation__${"very-long-skill-name-".repeat(4)}end`.slice(0, 64);
    const [result] = await executeToolCalls([call("a", toolName, { msg: "far" })], {
      executor: host.executor,
    });
    expect(result).toMatchObject({ handled: true, ok: true, output: { echoed: "far" } });
  });

  it("reads a dotted name and both sides of a collision back to their skills", async () => {
    host.registry.registerMany([
      echoSkill({ name: "github.issues" }),
      echoSkill({ name: "a.b", version: "1.0.0" }),
      echoSkill({ name: "a_b", version: "3.0.0" }),
    ]);
    const results = await executeToolCalls(
      [
        call("a", "github_issues", { msg: "dotted" }),
        call("b", "a_b", { msg: "plain" }),
        call("c", "a_b_2", { msg: "dot" }),
      ],
      { executor: host.executor },
    );
    expect(results.map((result) => result.output)).toEqual([
      { echoed: "dotted", version: "1.0.0" },
      { echoed: "plain", version: "3.0.0" },
      { echoed: "dot", version: "1.0.0" },
    ]);
    const executed = await Promise.all(
      results.map(
        async (result) => (await host.executor.getExecution(result.executionId as string))?.skillName,
      ),
    );
    expect(executed).toEqual(["github.issues", "a_b", "a.b"]);
  });

  it("runs at most `concurrency` calls at a time", async () => {
    const calls = Array.from({ length: 10 }, (_, index) => call(`c${index}`, "slow", { msg: `${index}` }));
    const results = await executeToolCalls(calls, { executor: host.executor, concurrency: 2 });
    expect(results.map((result) => result.output)).toEqual([
      "0",
      "1",
      "2",
      "3",
      "4",
      "5",
      "6",
      "7",
      "8",
      "9",
    ]);
    expect(mostRunning).toBe(2);

    // The default runs a typical turn (up to 8 calls) in one wave.
    mostRunning = 0;
    await executeToolCalls(calls, { executor: host.executor });
    expect(mostRunning).toBe(8);
  });

  it("reports calls cancelled by the signal as failures", async () => {
    const controller = new AbortController();
    controller.abort();
    const [result] = await executeToolCalls([call("a", "slow", { msg: "x" })], {
      executor: host.executor,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ handled: true, ok: false, error: { code: "CANCELLED" } });
  });
});

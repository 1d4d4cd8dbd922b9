import type { Skill } from "@skillbox/core";
import {
  executeToolCalls,
  extractToolCalls,
  resolveToolApprovals,
  resumeToolLoop,
  runToolLoop,
  type ToolLoopState,
  toToolResults,
} from "@skillbox/llm";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoSkill } from "./fixtures/echo-skill.js";
import { scriptedModel } from "./fixtures/scripted-model.js";

let host: TemporaryHost;
let skills: Skill[];

beforeEach(() => {
  host = createTemporaryHost();
  host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
  host.registry.registerMany([
    echoSkill({ name: "echo" }),
    echoSkill({ name: "transfer", approval: "required" }),
  ]);
  skills = host.registry.list("public");
});

afterEach(async () => {
  await host.dispose();
});

/** An OpenAI Chat response calling the given tools with `{ msg }`. */
function callsResponse(calls: Array<{ id: string; name: string; msg: string }>) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: calls.map((entry) => ({
            id: entry.id,
            type: "function",
            function: { name: entry.name, arguments: JSON.stringify({ msg: entry.msg }) },
          })),
        },
        finish_reason: "tool_calls",
      },
    ],
  };
}

const FINAL = {
  id: "chatcmpl-2",
  object: "chat.completion",
  choices: [{ index: 0, message: { role: "assistant", content: "Done" }, finish_reason: "stop" }],
};

const USER = { role: "user", content: "Move the money, then echo" };
const TURN = callsResponse([
  { id: "call_1", name: "echo", msg: "one" },
  { id: "call_2", name: "transfer", msg: "100 EUR" },
]);

/** Pauses a loop at the `transfer` call and returns its state as a stored copy would read back. */
async function pausedLoop(model: ReturnType<typeof scriptedModel>): Promise<ToolLoopState> {
  const paused = await runToolLoop({
    format: "openai-chat",
    send: model.send,
    messages: [USER],
    skills,
    executor: host.executor,
  });
  expect(paused.stoppedBecause).toBe("awaiting-approval");
  return JSON.parse(JSON.stringify(paused.state)) as ToolLoopState;
}

describe("executeToolCalls with approvals", () => {
  it("returns a call awaiting approval as a pending approval, not as a result for the model", async () => {
    const calls = extractToolCalls(TURN, "openai-chat", { skills });
    const results = await executeToolCalls(calls, { executor: host.executor, skills });
    expect(results[0]).toMatchObject({ handled: true, ok: true, output: { echoed: "one" } });
    const pending = results[1];
    expect(pending).toMatchObject({ handled: true, ok: false });
    expect(pending?.error).toBeUndefined();
    expect(pending?.approval).toMatchObject({
      toolCallId: "call_2",
      toolName: "transfer",
      executionId: pending?.executionId,
      skill: "transfer@1.0.0",
      input: { msg: "100 EUR" },
    });
    expect(typeof pending?.approval?.reason).toBe("string");
    expect((await host.executor.getExecution(pending?.executionId as string))?.status).toBe(
      "awaiting_approval",
    );
    // Only the finished call is answered: the pending one is no failure the model would read.
    expect(toToolResults(results, "openai-chat")).toEqual([
      { role: "tool", tool_call_id: "call_1", content: JSON.stringify({ echoed: "one" }) },
    ]);
  });

  it("resolves an approval with an edited input into the execution's result", async () => {
    const calls = extractToolCalls(TURN, "openai-chat", { skills });
    const results = await executeToolCalls(calls, { executor: host.executor, skills, apiKeyId: "alice" });
    const resolved = await resolveToolApprovals(
      results,
      [{ toolCallId: "call_2", approved: true, input: { msg: "50 EUR" }, by: "bob" }],
      { executor: host.executor, apiKeyId: "alice" },
    );
    expect(resolved[0]).toBe(results[0]);
    expect(resolved[1]).toMatchObject({ ok: true, output: { echoed: "50 EUR" } });
    expect(resolved[1]?.approval).toBeUndefined();
    const record = await host.executor.getExecution(results[1]?.executionId as string);
    expect(record).toMatchObject({
      status: "success",
      approval: { decision: "approved", decidedBy: "bob", inputEdited: true },
    });
  });
});

describe("runToolLoop / resumeToolLoop with approvals", () => {
  it("pauses at a call awaiting approval and, approved, sends its result to the model", async () => {
    const model = scriptedModel([TURN, FINAL]);
    const paused = await runToolLoop({
      format: "openai-chat",
      send: model.send,
      messages: [USER],
      skills,
      executor: host.executor,
    });
    expect(paused).toMatchObject({ stoppedBecause: "awaiting-approval", steps: 1 });
    expect(paused.pendingApprovals).toEqual([expect.objectContaining({ toolCallId: "call_2" })]);
    // Nothing was sent back yet: the turn is answered once, when every call has its result.
    expect(model.requests).toHaveLength(1);
    expect(paused.messages).toEqual([USER, TURN.choices[0]?.message]);

    const state = JSON.parse(JSON.stringify(paused.state)) as ToolLoopState;
    const resumed = await resumeToolLoop({
      format: "openai-chat",
      send: model.send,
      skills,
      executor: host.executor,
      state,
      decisions: [{ executionId: paused.pendingApprovals?.[0]?.executionId as string, approved: true }],
      by: "carol",
    });
    expect(resumed).toMatchObject({ stoppedBecause: "no-tool-calls", steps: 2, response: FINAL });
    expect(model.requests[1]?.messages).toEqual([
      USER,
      TURN.choices[0]?.message,
      { role: "tool", tool_call_id: "call_1", content: JSON.stringify({ echoed: "one" }) },
      { role: "tool", tool_call_id: "call_2", content: JSON.stringify({ echoed: "100 EUR" }) },
    ]);
    const transfer = (await host.executor.listExecutions()).find(
      (execution) => execution.skillName === "transfer",
    );
    expect(transfer).toMatchObject({ status: "success", approval: { decidedBy: "carol" } });
  });

  it("tells the model a rejected call was rejected, with the reason, and records it rejected", async () => {
    const model = scriptedModel([TURN, FINAL]);
    const state = await pausedLoop(model);
    const resumed = await resumeToolLoop({
      format: "openai-chat",
      send: model.send,
      skills,
      executor: host.executor,
      state,
      decisions: [{ toolCallId: "call_2", approved: false, reason: "too much money" }],
    });
    expect(resumed.stoppedBecause).toBe("no-tool-calls");
    const answer = (model.requests[1]?.messages ?? []).at(-1) as { tool_call_id: string; content: string };
    expect(answer.tool_call_id).toBe("call_2");
    const payload = JSON.parse(answer.content) as { error: { code: string; message: string } };
    expect(payload.error).toMatchObject({
      code: "APPROVAL_REJECTED",
      message: expect.stringContaining("too much money"),
    });
    const transfer = (await host.executor.listExecutions()).find(
      (execution) => execution.skillName === "transfer",
    );
    expect(transfer).toMatchObject({
      status: "rejected",
      error: { code: "APPROVAL_REJECTED" },
      approval: { decision: "rejected", comment: "too much money" },
    });
  });

  it("refuses bad decisions and a bad state before deciding anything", async () => {
    const model = scriptedModel([TURN, FINAL]);
    const state = await pausedLoop(model);
    const base = { format: "openai-chat" as const, send: model.send, skills, executor: host.executor, state };
    await expect(
      resumeToolLoop({ ...base, decisions: [{ executionId: "nope", approved: true }] }),
    ).rejects.toMatchObject({ code: "TOOL_APPROVAL_NOT_FOUND" });
    await expect(
      resumeToolLoop({
        ...base,
        decisions: [
          { toolCallId: "call_2", approved: true },
          { toolCallId: "call_1", approved: true },
        ],
      }),
    ).rejects.toMatchObject({ code: "TOOL_APPROVAL_NOT_PENDING" });
    await expect(
      resumeToolLoop({
        ...base,
        decisions: [
          { toolCallId: "call_2", approved: true },
          { toolCallId: "call_2", approved: false },
        ],
      }),
    ).rejects.toMatchObject({ code: "TOOL_APPROVAL_NOT_PENDING" });
    await expect(resumeToolLoop({ ...base, decisions: [] })).rejects.toMatchObject({
      code: "TOOL_APPROVAL_MISSING",
    });
    await expect(
      resumeToolLoop({ ...base, decisions: [{ toolCallId: "call_2", approved: "yes" as never }] }),
    ).rejects.toMatchObject({
      code: "INPUT_INVALID",
      message: expect.stringContaining("decisions[0].approved"),
    });
    await expect(
      resumeToolLoop({ ...base, format: "anthropic", decisions: [{ toolCallId: "call_2", approved: true }] }),
    ).rejects.toMatchObject({ code: "TOOL_LOOP_STATE_INVALID" });
    const transfer = (await host.executor.listExecutions()).find(
      (execution) => execution.skillName === "transfer",
    );
    expect(transfer?.status).toBe("awaiting_approval");
    expect(model.requests).toHaveLength(1);
  });

  it("resumes a call decided elsewhere meanwhile with that decision's outcome", async () => {
    const model = scriptedModel([TURN, FINAL]);
    const state = await pausedLoop(model);
    const executionId = state.results[1]?.executionId as string;
    await host.executor.approve(executionId, { by: "ops" });
    const resumed = await resumeToolLoop({
      format: "openai-chat",
      send: model.send,
      skills,
      executor: host.executor,
      state,
      decisions: [{ executionId, approved: true }],
    });
    expect(resumed.stoppedBecause).toBe("no-tool-calls");
    expect(JSON.stringify(model.requests[1]?.messages)).toContain("100 EUR");
    expect(await host.executor.getExecution(executionId)).toMatchObject({
      status: "success",
      approval: { decidedBy: "ops" },
    });
  });

  it("tells the model a call whose approval lapsed was not run", async () => {
    host.registry.registerMany([echoSkill({ name: "hasty", approval: "required", approvalTimeoutMs: 1 })]);
    const offered = host.registry.list("public").filter((entry) => entry.name === "hasty");
    const turn = callsResponse([{ id: "call_9", name: "hasty", msg: "now" }]);
    const model = scriptedModel([turn, FINAL]);
    const paused = await runToolLoop({
      format: "openai-chat",
      send: model.send,
      messages: [USER],
      skills: offered,
      executor: host.executor,
    });
    const executionId = paused.pendingApprovals?.[0]?.executionId as string;
    // The host's queue expires it: the record ends before anyone decides.
    expect(await host.executor.wait(executionId)).toMatchObject({
      status: "rejected",
      error: { code: "APPROVAL_EXPIRED" },
    });
    const resumed = await resumeToolLoop({
      format: "openai-chat",
      send: model.send,
      skills: offered,
      executor: host.executor,
      state: paused.state as ToolLoopState,
      decisions: [{ executionId, approved: true }],
    });
    expect(resumed.stoppedBecause).toBe("no-tool-calls");
    const answer = (model.requests[1]?.messages ?? []).at(-1) as { content: string };
    expect(JSON.parse(answer.content)).toMatchObject({ error: { code: "APPROVAL_EXPIRED" } });
  });
});

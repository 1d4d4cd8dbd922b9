import type { Skill } from "@skillbox/core";
import { runToolLoop, type ToolFormat } from "@skillbox/llm";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoSkill } from "./fixtures/echo-skill.js";
import { scriptedModel } from "./fixtures/scripted-model.js";

let host: TemporaryHost;
let skills: Skill[];

beforeEach(() => {
  host = createTemporaryHost();
  host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
  host.registry.registerMany([echoSkill({ name: "echo" }), echoSkill({ name: "hidden" })]);
  skills = host.registry.list("public").filter((entry) => entry.name === "echo");
});

afterEach(async () => {
  await host.dispose();
});

interface FormatScript {
  format: ToolFormat;
  user: unknown;
  /** A response calling the given tools with `{ msg }` (or raw JSON text in `bad`). */
  callsResponse(calls: Array<{ id: string; name: string; msg?: string; bad?: string }>): unknown;
  finalResponse: unknown;
  /** The turns runToolLoop appends for a calls response followed by its results. */
  expectedTurns(
    response: unknown,
    results: Array<{ id: string; name: string; content: unknown; isError?: boolean }>,
  ): unknown[];
}

const scripts: FormatScript[] = [
  {
    format: "openai-chat",
    user: { role: "user", content: "Echo hi twice" },
    callsResponse: (calls) => ({
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
              function: { name: entry.name, arguments: entry.bad ?? JSON.stringify({ msg: entry.msg }) },
            })),
          },
          finish_reason: "tool_calls",
        },
      ],
    }),
    finalResponse: {
      id: "chatcmpl-2",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "Done" }, finish_reason: "stop" }],
    },
    expectedTurns: (response, results) => [
      (response as { choices: Array<{ message: unknown }> }).choices[0]?.message,
      ...results.map((result) => ({
        role: "tool",
        tool_call_id: result.id,
        content: JSON.stringify(result.content),
      })),
    ],
  },
  {
    format: "openai-responses",
    user: { role: "user", content: "Echo hi twice" },
    callsResponse: (calls) => ({
      id: "resp_1",
      object: "response",
      output: calls.map((entry, index) => ({
        type: "function_call",
        id: `fc_${index}`,
        call_id: entry.id,
        name: entry.name,
        arguments: entry.bad ?? JSON.stringify({ msg: entry.msg }),
        status: "completed",
      })),
    }),
    finalResponse: {
      id: "resp_2",
      object: "response",
      output: [
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          content: [{ type: "output_text", text: "Done", annotations: [] }],
        },
      ],
    },
    expectedTurns: (response, results) => [
      ...(response as { output: unknown[] }).output,
      ...results.map((result) => ({
        type: "function_call_output",
        call_id: result.id,
        output: JSON.stringify(result.content),
      })),
    ],
  },
  {
    format: "anthropic",
    user: { role: "user", content: "Echo hi twice" },
    callsResponse: (calls) => ({
      id: "msg_1",
      type: "message",
      role: "assistant",
      stop_reason: "tool_use",
      content: calls.map((entry) => ({
        type: "tool_use",
        id: entry.id,
        name: entry.name,
        // Anthropic always sends parsed input; a "bad" call is modelled as a wrong-typed input instead.
        input: entry.bad === undefined ? { msg: entry.msg } : { msg: 42 },
      })),
    }),
    finalResponse: {
      id: "msg_2",
      type: "message",
      role: "assistant",
      stop_reason: "end_turn",
      content: [{ type: "text", text: "Done" }],
    },
    expectedTurns: (response, results) => [
      { role: "assistant", content: (response as { content: unknown }).content },
      {
        role: "user",
        content: results.map((result) => ({
          type: "tool_result",
          tool_use_id: result.id,
          content: JSON.stringify(result.content),
          ...(result.isError === true ? { is_error: true } : {}),
        })),
      },
    ],
  },
  {
    format: "gemini",
    user: { role: "user", parts: [{ text: "Echo hi twice" }] },
    callsResponse: (calls) => ({
      candidates: [
        {
          content: {
            role: "model",
            parts: calls.map((entry) => ({
              functionCall: {
                id: entry.id,
                name: entry.name,
                args: entry.bad === undefined ? { msg: entry.msg } : { msg: 42 },
              },
            })),
          },
          finishReason: "STOP",
        },
      ],
    }),
    finalResponse: {
      candidates: [{ content: { role: "model", parts: [{ text: "Done" }] }, finishReason: "STOP" }],
    },
    expectedTurns: (response, results) => [
      (response as { candidates: Array<{ content: unknown }> }).candidates[0]?.content,
      {
        role: "user",
        parts: results.map((result) => ({
          functionResponse: {
            name: result.name,
            response:
              result.isError === true
                ? { error: (result.content as { error: unknown }).error }
                : { output: result.content },
            id: result.id,
          },
        })),
      },
    ],
  },
];

describe.each(scripts)("runToolLoop ($format)", (script) => {
  it("runs parallel skill calls, sends their results back and stops when the model answers", async () => {
    const first = script.callsResponse([
      { id: "call_1", name: "echo", msg: "one" },
      { id: "call_2", name: "echo", msg: "two" },
    ]);
    const model = scriptedModel([first, script.finalResponse]);
    const outcome = await runToolLoop({
      format: script.format,
      send: model.send,
      messages: [script.user],
      skills,
      executor: host.executor,
    });
    expect(outcome).toMatchObject({
      steps: 2,
      stoppedBecause: "no-tool-calls",
      response: script.finalResponse,
    });
    const turns = script.expectedTurns(first, [
      { id: "call_1", name: "echo", content: { echoed: "one" } },
      { id: "call_2", name: "echo", content: { echoed: "two" } },
    ]);
    expect(model.requests[0]?.messages).toEqual([script.user]);
    expect(model.requests[1]?.messages).toEqual([script.user, ...turns]);
    expect(model.requests[0]?.tools).toHaveLength(1);
    expect(outcome.messages).toEqual([script.user, ...turns]);
    expect(await host.executor.countExecutions({ status: "success" })).toBe(2);
  });

  it("stops at a client tool after running the skill calls of the same response", async () => {
    const first = script.callsResponse([
      { id: "call_1", name: "echo", msg: "one" },
      { id: "call_2", name: "get_time", msg: "now" },
    ]);
    const model = scriptedModel([first]);
    const outcome = await runToolLoop({
      format: script.format,
      send: model.send,
      messages: [script.user],
      skills,
      executor: host.executor,
    });
    expect(outcome).toMatchObject({ steps: 1, stoppedBecause: "client-tools", response: first });
    expect(outcome.messages).toEqual([
      script.user,
      ...script.expectedTurns(first, [{ id: "call_1", name: "echo", content: { echoed: "one" } }]),
    ]);
  });

  it("leaves a skill that was not offered to the client, never running it", async () => {
    const first = script.callsResponse([
      { id: "call_1", name: "hidden", msg: "sneaky" },
      { id: "call_2", name: "echo", msg: "one" },
    ]);
    const model = scriptedModel([first]);
    const outcome = await runToolLoop({
      format: script.format,
      send: model.send,
      messages: [script.user],
      skills,
      executor: host.executor,
    });
    // `hidden` is registered but not offered: to the loop it is a name like any tool of the client.
    expect(outcome).toMatchObject({ steps: 1, stoppedBecause: "client-tools" });
    expect(outcome.messages).toEqual([
      script.user,
      ...script.expectedTurns(first, [{ id: "call_2", name: "echo", content: { echoed: "one" } }]),
    ]);
    expect((await host.executor.listExecutions()).some((execution) => execution.skillName === "hidden")).toBe(
      false,
    );
  });

  it("reports invalid input to the model, then stops at maxSteps", async () => {
    const first = script.callsResponse([{ id: "call_2", name: "echo", bad: '{"msg":' }]);
    const model = scriptedModel([first, first, first]);
    const outcome = await runToolLoop({
      format: script.format,
      send: model.send,
      messages: [script.user],
      skills,
      executor: host.executor,
      maxSteps: 2,
    });
    expect(outcome).toMatchObject({ steps: 2, stoppedBecause: "max-steps" });
    // Only the first response's calls ran: the budget stops before running the last one's.
    expect(outcome.messages).toHaveLength(model.requests[1]?.messages.length ?? -1);
    const sent = JSON.stringify(model.requests[1]?.messages);
    expect(sent).toMatch(/TOOL_ARGUMENTS_INVALID|INPUT_INVALID/);
    expect(await host.executor.countExecutions({ status: "success" })).toBe(0);
  });

  it("offers a dotted skill as its plain name and runs its calls", async () => {
    host.registry.registerMany([echoSkill({ name: "github.issues" })]);
    const offered = host.registry.list("public").filter((entry) => entry.name === "github.issues");
    const first = script.callsResponse([{ id: "call_1", name: "github_issues", msg: "open" }]);
    const model = scriptedModel([first, script.finalResponse]);
    const outcome = await runToolLoop({
      format: script.format,
      send: model.send,
      messages: [script.user],
      skills: offered,
      executor: host.executor,
    });
    expect(JSON.stringify(model.requests[0]?.tools)).toContain('"name":"github_issues"');
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    expect((await host.executor.listExecutions()).map((execution) => execution.skillName)).toEqual([
      "github.issues",
    ]);
  });
});

describe("runToolLoop", () => {
  it("rejects an unknown format and an aborted signal before sending", async () => {
    const model = scriptedModel([]);
    const base = { send: model.send, messages: [], skills, executor: host.executor };
    await expect(runToolLoop({ ...base, format: "bard" as never })).rejects.toMatchObject({
      code: "TOOL_FORMAT_INVALID",
    });
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(runToolLoop({ ...base, format: "anthropic", signal: controller.signal })).rejects.toThrow(
      "stop",
    );
    expect(model.requests).toHaveLength(0);
  });
});

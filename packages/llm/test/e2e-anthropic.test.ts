// The tool loop end to end through the official `@anthropic-ai/sdk` client against a scripted
// model server on loopback, with a real host and a real SQLite audit trail.
import Anthropic from "@anthropic-ai/sdk";
import type { Skill } from "@skillbox/core";
import { runToolLoop } from "@skillbox/llm";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedModelServer, ScriptedTurn } from "./fixtures/scripted-model-server.js";
import { ADD, CLIENT_TOOL, createLoopTestBed, FAIL, GREET } from "./fixtures/tool-skills.js";

const bed = createLoopTestBed();
const hostWithSkills = bed.hostWithSkills;

afterEach(() => bed.dispose());

async function startServer(
  script: ScriptedTurn[],
): Promise<{ server: ScriptedModelServer; client: Anthropic }> {
  const started = await bed.startModelServer(script);
  return { server: started, client: new Anthropic({ apiKey: "test", baseURL: started.url, maxRetries: 0 }) };
}

const clientTool: Anthropic.Tool = {
  name: CLIENT_TOOL,
  description: "The time on the user's device (handled by the client app)",
  input_schema: { type: "object", properties: {} },
};

function runMessages(
  client: Anthropic,
  skills: Skill[],
  host: TemporaryHost,
  extraTools: Anthropic.Tool[] = [],
  messages: unknown[] = [
    { role: "user", content: "Add 2 and 3, then greet Ada." } satisfies Anthropic.MessageParam,
  ],
) {
  return runToolLoop({
    format: "anthropic",
    messages,
    skills,
    executor: host.executor,
    send: (request) =>
      client.messages.create({
        model: "claude-scripted-test",
        max_tokens: 1024,
        messages: request.messages as Anthropic.MessageParam[],
        tools: [...(request.tools as Anthropic.Tool[]), ...extraTools],
      }),
  });
}

/** The tool_result block answering `toolUseId` in a recorded request's last message. */
function toolResult(
  body: Record<string, unknown>,
  toolUseId: string,
): { content?: unknown; is_error?: boolean } | undefined {
  const last = (body.messages as Array<{ content: Array<Record<string, unknown>> }>).at(-1);
  return last?.content.find((block) => block.type === "tool_result" && block.tool_use_id === toolUseId) as
    | { content?: unknown; is_error?: boolean }
    | undefined;
}

const asText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

describe("runToolLoop with the Anthropic client (messages)", () => {
  it("runs two parallel skill calls and returns the model's final text", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        text: "Let me work that out.",
        toolCalls: [
          { tool: ADD, arguments: { a: 2, b: 3 } },
          { tool: GREET, arguments: { name: "Ada" } },
        ],
      },
      { text: "2 + 3 = 5. Hello, Ada!" },
    ]);

    const outcome = await runMessages(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    const final = outcome.response as Anthropic.Message;
    expect(final.stop_reason).toBe("end_turn");
    expect(final.content).toEqual([
      expect.objectContaining({ type: "text", text: "2 + 3 = 5. Hello, Ada!" }),
    ]);
    const [addCall, greetCall] = server.issuedCalls;
    const followUp = server.requests[1]!.body;
    expect(asText(toolResult(followUp, addCall!.id)?.content)).toContain("5");
    expect(asText(toolResult(followUp, greetCall!.id)?.content)).toContain("Hello, Ada!");
    expect(
      (await host.executor.listExecutions({ skill: "add" })).map((execution) => execution.output),
    ).toEqual([5]);
    expect(
      (await host.executor.listExecutions({ skill: "greet" })).map((execution) => execution.output),
    ).toEqual(["Hello, Ada!"]);
  });

  it("stops at a client tool call without executing it, and resumes once the client answers it", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: GREET, arguments: { name: "Ada" } },
          { tool: CLIENT_TOOL, arguments: {} },
        ],
      },
      { text: "Hello, Ada! It is noon." },
    ]);

    const outcome = await runMessages(client, skills, host, [clientTool]);

    expect(outcome.stoppedBecause).toBe("client-tools");
    expect(server.requests).toHaveLength(1);
    const [greetCall, clientCall] = server.issuedCalls;
    expect((await host.executor.listExecutions()).map((execution) => execution.skillName)).toEqual(["greet"]);
    const last = outcome.messages.at(-1) as Anthropic.MessageParam;
    expect(last.role).toBe("user");
    expect(last.content).toEqual([
      expect.objectContaining({ type: "tool_result", tool_use_id: greetCall!.id }),
    ]);

    // The client's tool_result goes in a user message of its own; the API merges consecutive user turns.
    const resumed = await runMessages(
      client,
      skills,
      host,
      [clientTool],
      [
        ...outcome.messages,
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: clientCall!.id, content: "12:00" }],
        } satisfies Anthropic.MessageParam,
      ],
    );
    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(resumed.stoppedBecause).toBe("no-tool-calls");
    expect(await host.executor.listExecutions({ skill: "greet" })).toHaveLength(1);
  });

  it("marks a failing skill's tool_result with is_error and finishes", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, arguments: { a: 4, b: 5 } },
          { tool: FAIL, arguments: {}, expectError: true },
        ],
      },
      { text: "The second tool failed." },
    ]);

    const outcome = await runMessages(client, skills, host);

    // The server itself checks is_error on every tool_result and answers 400 when it is wrong.
    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    const failResult = toolResult(server.requests[1]!.body, server.issuedCalls[1]!.id);
    expect(failResult?.is_error).toBe(true);
    expect(asText(failResult?.content)).toContain("the printer is on fire");
    expect(
      (await host.executor.listExecutions({ skill: "fail" })).map((execution) => execution.status),
    ).toEqual(["error"]);
  });

  it("marks input that breaks the skill's schema with is_error instead of crashing", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, arguments: { a: "two", b: 3 }, expectError: true },
          { tool: GREET, arguments: { name: "Grace" } },
        ],
      },
      { text: "Sorry, I sent a string." },
    ]);

    const outcome = await runMessages(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    expect(await host.executor.listExecutions({ skill: "add", status: "success" })).toEqual([]);
    expect(await host.executor.listExecutions({ skill: "greet" })).toHaveLength(1);
  });
});

// The tool loop end to end through the official `openai` client against a scripted model server
// on loopback: Chat Completions and Responses, real host with a real SQLite audit trail.
import type { Skill } from "@skillbox/core";
import { runToolLoop } from "@skillbox/llm";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptedModelServer, ScriptedTurn } from "./fixtures/scripted-model-server.js";
import { ADD, CLIENT_TOOL, createLoopTestBed, FAIL, GREET } from "./fixtures/tool-skills.js";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

const bed = createLoopTestBed();
const hostWithSkills = bed.hostWithSkills;

afterEach(() => bed.dispose());

async function startServer(script: ScriptedTurn[]): Promise<{ server: ScriptedModelServer; client: OpenAI }> {
  const started = await bed.startModelServer(script);
  const client = new OpenAI({ apiKey: "test", baseURL: `${started.url}/v1`, maxRetries: 0 });
  return { server: started, client };
}

const clientChatTool: ChatTool = {
  type: "function",
  function: {
    name: CLIENT_TOOL,
    description: "The time on the user's device (handled by the client app)",
    parameters: { type: "object", properties: {} },
  },
};

const clientResponsesTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: CLIENT_TOOL,
  description: "The time on the user's device (handled by the client app)",
  parameters: { type: "object", properties: {} },
  strict: false,
};

/** The role:"tool" message answering `callId` in a recorded Chat request. */
function chatToolMessage(body: Record<string, unknown>, callId: string): { content: unknown } | undefined {
  return (body.messages as Array<Record<string, unknown>>).find(
    (message) => message.role === "tool" && message.tool_call_id === callId,
  ) as { content: unknown } | undefined;
}

/** The function_call_output item answering `callId` in a recorded Responses request. */
function responsesOutput(body: Record<string, unknown>, callId: string): { output: unknown } | undefined {
  return (body.input as Array<Record<string, unknown>>).find(
    (item) => item.type === "function_call_output" && item.call_id === callId,
  ) as { output: unknown } | undefined;
}

const asText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

describe("runToolLoop with the OpenAI client (chat.completions)", () => {
  const runChat = (
    client: OpenAI,
    skills: Skill[],
    host: TemporaryHost,
    extraTools: ChatTool[] = [],
    messages: unknown[] = [{ role: "user", content: "Add 2 and 3, then greet Ada." } satisfies ChatMessage],
  ) =>
    runToolLoop({
      format: "openai-chat",
      messages,
      skills,
      executor: host.executor,
      send: (request) =>
        client.chat.completions.create({
          model: "gpt-scripted-test",
          messages: request.messages as ChatMessage[],
          tools: [...(request.tools as ChatTool[]), ...extraTools],
        }),
    });

  it("runs two parallel skill calls and returns the model's final text", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, arguments: { a: 2, b: 3 } },
          { tool: GREET, arguments: { name: "Ada" } },
        ],
      },
      { text: "2 + 3 = 5. Hello, Ada!" },
    ]);

    const outcome = await runChat(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    expect((outcome.response as OpenAI.Chat.Completions.ChatCompletion).choices[0]?.message.content).toBe(
      "2 + 3 = 5. Hello, Ada!",
    );
    const [addCall, greetCall] = server.issuedCalls;
    const followUp = server.requests[1]!.body;
    expect(asText(chatToolMessage(followUp, addCall!.id)?.content)).toContain("5");
    expect(asText(chatToolMessage(followUp, greetCall!.id)?.content)).toContain("Hello, Ada!");
    const adds = await host.executor.listExecutions({ skill: "add" });
    const greets = await host.executor.listExecutions({ skill: "greet" });
    expect(adds.map((execution) => [execution.status, execution.output])).toEqual([["success", 5]]);
    expect(greets.map((execution) => [execution.status, execution.output])).toEqual([
      ["success", "Hello, Ada!"],
    ]);
    expect(outcome.steps).toBe(2);
    // user, assistant tool_calls, two tool results: the final response is not appended (documented).
    expect(outcome.messages.map((message) => (message as { role: string }).role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
    ]);
  });

  it("stops at a client tool call without executing it, and resumes once the client answers it", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, arguments: { a: 1, b: 1 } },
          { tool: CLIENT_TOOL, arguments: {} },
        ],
      },
      { text: "1 + 1 = 2 and it is noon." },
    ]);

    const outcome = await runChat(client, skills, host, [clientChatTool]);

    expect(outcome.stoppedBecause).toBe("client-tools");
    expect(server.requests).toHaveLength(1);
    const [addCall, clientCall] = server.issuedCalls;
    expect((await host.executor.listExecutions()).map((execution) => execution.skillName)).toEqual(["add"]);
    const toolMessages = outcome.messages.filter((message) => (message as { role: string }).role === "tool");
    expect(toolMessages).toEqual([expect.objectContaining({ tool_call_id: addCall!.id })]);

    // The client answers its own tool; the server checks every call of the turn now has a result.
    const resumed = await runChat(
      client,
      skills,
      host,
      [clientChatTool],
      [
        ...outcome.messages,
        { role: "tool", tool_call_id: clientCall!.id, content: "12:00" } satisfies ChatMessage,
      ],
    );
    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(resumed.stoppedBecause).toBe("no-tool-calls");
    expect((resumed.response as OpenAI.Chat.Completions.ChatCompletion).choices[0]?.message.content).toBe(
      "1 + 1 = 2 and it is noon.",
    );
    expect(await host.executor.listExecutions({ skill: "add" })).toHaveLength(1);
  });

  it("sends a failing skill back as an error tool result and finishes", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, arguments: { a: 4, b: 5 } },
          { tool: FAIL, arguments: {} },
        ],
      },
      { text: "The second tool failed." },
    ]);

    const outcome = await runChat(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    const failCall = server.issuedCalls[1]!;
    expect(asText(chatToolMessage(server.requests[1]!.body, failCall.id)?.content)).toContain(
      "the printer is on fire",
    );
    expect(
      (await host.executor.listExecutions({ skill: "fail" })).map((execution) => execution.status),
    ).toEqual(["error"]);
    expect(
      (await host.executor.listExecutions({ skill: "add" })).map((execution) => execution.output),
    ).toEqual([9]);
  });

  it("answers malformed JSON arguments with an error result instead of crashing", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, rawArguments: '{"a": 2, "b":' },
          { tool: GREET, arguments: { name: "Grace" } },
        ],
      },
      { text: "Sorry, I sent broken arguments." },
    ]);

    const outcome = await runChat(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    const malformed = chatToolMessage(server.requests[1]!.body, server.issuedCalls[0]!.id);
    expect(asText(malformed?.content).toLowerCase()).toMatch(/json|argument|invalid/);
    expect(await host.executor.listExecutions({ skill: "add" })).toEqual([]);
    expect(await host.executor.listExecutions({ skill: "greet" })).toHaveLength(1);
  });
});

describe("runToolLoop with the OpenAI client (responses)", () => {
  const runResponses = (
    client: OpenAI,
    skills: Skill[],
    host: TemporaryHost,
    extraTools: OpenAI.Responses.Tool[] = [],
    messages: unknown[] = [{ role: "user", content: "Add 2 and 3, then greet Ada." }],
  ) =>
    runToolLoop({
      format: "openai-responses",
      messages,
      skills,
      executor: host.executor,
      send: (request) =>
        client.responses.create({
          model: "gpt-scripted-test",
          input: request.messages as OpenAI.Responses.ResponseInput,
          tools: [...(request.tools as OpenAI.Responses.Tool[]), ...extraTools],
        }),
    });

  it("runs two parallel skill calls and returns the model's final text", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: ADD, arguments: { a: 2, b: 3 } },
          { tool: GREET, arguments: { name: "Ada" } },
        ],
      },
      { text: "2 + 3 = 5. Hello, Ada!" },
    ]);

    const outcome = await runResponses(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    expect((outcome.response as OpenAI.Responses.Response).output_text).toBe("2 + 3 = 5. Hello, Ada!");
    const [addCall, greetCall] = server.issuedCalls;
    const followUp = server.requests[1]!.body;
    expect(asText(responsesOutput(followUp, addCall!.id)?.output)).toContain("5");
    expect(asText(responsesOutput(followUp, greetCall!.id)?.output)).toContain("Hello, Ada!");
    expect(await host.executor.listExecutions({ skill: "add" })).toHaveLength(1);
    expect(await host.executor.listExecutions({ skill: "greet" })).toHaveLength(1);
  });

  it("stops at a client tool call without executing it, and resumes once the client answers it", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      { toolCalls: [{ tool: CLIENT_TOOL, arguments: {} }] },
      { text: "It is noon." },
    ]);

    const outcome = await runResponses(client, skills, host, [clientResponsesTool]);

    expect(outcome.stoppedBecause).toBe("client-tools");
    expect(server.requests).toHaveLength(1);
    expect(await host.executor.listExecutions()).toEqual([]);
    const clientCall = server.issuedCalls[0]!;
    expect(outcome.messages.at(-1)).toMatchObject({ type: "function_call", call_id: clientCall.id });

    const resumed = await runResponses(
      client,
      skills,
      host,
      [clientResponsesTool],
      [...outcome.messages, { type: "function_call_output", call_id: clientCall.id, output: "12:00" }],
    );
    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect((resumed.response as OpenAI.Responses.Response).output_text).toBe("It is noon.");
  });

  it("sends failing and malformed calls back as error outputs and finishes", async () => {
    const { host, skills } = hostWithSkills();
    const { server, client } = await startServer([
      {
        toolCalls: [
          { tool: FAIL, arguments: {} },
          { tool: ADD, rawArguments: "not json" },
        ],
      },
      { text: "Both tools failed." },
    ]);

    const outcome = await runResponses(client, skills, host);

    expect(server.requests.map((request) => request.rejected)).toEqual([undefined, undefined]);
    expect(outcome.stoppedBecause).toBe("no-tool-calls");
    const [failCall, addCall] = server.issuedCalls;
    const followUp = server.requests[1]!.body;
    expect(asText(responsesOutput(followUp, failCall!.id)?.output)).toContain("the printer is on fire");
    expect(asText(responsesOutput(followUp, addCall!.id)?.output).toLowerCase()).toMatch(
      /json|argument|invalid/,
    );
    expect(await host.executor.listExecutions({ skill: "add" })).toEqual([]);
  });
});

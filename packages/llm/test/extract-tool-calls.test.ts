import { extractToolCalls } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

/** The skills the responses' tools were listed from (`toTools(SKILLS, format)`). */
const SKILLS = [
  { name: "echo", version: "1.0.0" },
  { name: "@acme/weather", version: "2.0.0" },
  { name: "github.issues", version: "1.0.0" },
];

/** Shaped like a Chat Completions response with parallel tool calls (a skill, a client tool, bad JSON). */
const chatResponse = {
  id: "chatcmpl-9abc",
  object: "chat.completion",
  created: 1_764_400_000,
  model: "gpt-4o-2024-08-06",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [
          {
            id: "call_echo",
            type: "function",
            function: { name: "echo", arguments: '{"msg":"hi"}' },
          },
          {
            id: "call_time",
            type: "function",
            function: { name: "get_time", arguments: '{"zone":"UTC"}' },
          },
          {
            id: "call_bad",
            type: "function",
            function: { name: "echo", arguments: '{"msg": "cut' },
          },
        ],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 82, completion_tokens: 60, total_tokens: 142 },
};

const responsesResponse = {
  id: "resp_67ccd2bed1ec8190",
  object: "response",
  status: "completed",
  model: "gpt-4.1-2025-04-14",
  output: [
    { type: "reasoning", id: "rs_1", summary: [] },
    {
      type: "function_call",
      id: "fc_1",
      call_id: "call_weather",
      name: "acme__weather",
      arguments: '{"city":"Paris"}',
      status: "completed",
    },
    {
      type: "function_call",
      id: "fc_2",
      call_id: "call_empty",
      name: "github_issues",
      arguments: "",
      status: "completed",
    },
    {
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Checking.", annotations: [] }],
    },
  ],
};

const anthropicResponse = {
  id: "msg_01Aq9w938a90dw8q",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  stop_reason: "tool_use",
  stop_sequence: null,
  content: [
    { type: "text", text: "I'll look both up." },
    { type: "tool_use", id: "toolu_01A", name: "acme__weather", input: { city: "Paris" } },
    { type: "tool_use", id: "toolu_01B", name: "get_time", input: {} },
  ],
  usage: { input_tokens: 472, output_tokens: 91 },
};

const geminiResponse = {
  candidates: [
    {
      content: {
        role: "model",
        parts: [
          { text: "Sure." },
          { functionCall: { name: "echo", args: { msg: "one" } } },
          { functionCall: { name: "echo", args: { msg: "two" } } },
          { functionCall: { id: "fc-gemini-7", name: "get_time", args: { zone: "CET" } } },
        ],
      },
      finishReason: "STOP",
      index: 0,
    },
  ],
  usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 30, totalTokenCount: 150 },
  modelVersion: "gemini-2.5-flash",
};

describe("extractToolCalls", () => {
  it("reads parallel Chat Completions tool calls, skills and client tools alike, keeping bad JSON as an error", () => {
    const [echo, time, bad] = extractToolCalls(chatResponse, "openai-chat", { skills: SKILLS });
    expect(echo).toEqual({
      id: "call_echo",
      name: "echo",
      arguments: { msg: "hi" },
      skill: { name: "echo" },
    });
    expect(time).toEqual({ id: "call_time", name: "get_time", arguments: { zone: "UTC" } });
    expect(bad).toMatchObject({
      id: "call_bad",
      arguments: '{"msg": "cut',
      skill: { name: "echo" },
      error: expect.stringContaining("not valid JSON"),
    });
  });

  it("reads Responses API function_call items by call_id and treats empty arguments as {}", () => {
    expect(extractToolCalls(responsesResponse, "openai-responses", { skills: SKILLS })).toEqual([
      {
        id: "call_weather",
        name: "acme__weather",
        arguments: { city: "Paris" },
        skill: { name: "@acme/weather" },
      },
      { id: "call_empty", name: "github_issues", arguments: {}, skill: { name: "github.issues" } },
    ]);
  });

  it("reads Anthropic tool_use blocks", () => {
    expect(extractToolCalls(anthropicResponse, "anthropic", { skills: SKILLS })).toEqual([
      {
        id: "toolu_01A",
        name: "acme__weather",
        arguments: { city: "Paris" },
        skill: { name: "@acme/weather" },
      },
      { id: "toolu_01B", name: "get_time", arguments: {} },
    ]);
  });

  it("reads Gemini functionCall parts, making up ids from name and position when absent", () => {
    expect(extractToolCalls(geminiResponse, "gemini", { skills: SKILLS })).toEqual([
      { id: "echo-0", name: "echo", arguments: { msg: "one" }, skill: { name: "echo" } },
      { id: "echo-1", name: "echo", arguments: { msg: "two" }, skill: { name: "echo" } },
      { id: "fc-gemini-7", name: "get_time", arguments: { zone: "CET" } },
    ]);
  });

  it("marks skill calls only through the offered skills' tool names, pinned ones included", () => {
    // Without the skills a name is just a name: `echo` could be a tool of the client.
    expect(extractToolCalls(anthropicResponse, "anthropic").map((call) => call.skill)).toEqual([
      undefined,
      undefined,
    ]);
    const pinned = {
      content: [
        { type: "tool_use", id: "a", name: "echo_v1_0_0", input: {} },
        { type: "tool_use", id: "b", name: "echo", input: {} },
      ],
    };
    expect(
      extractToolCalls(pinned, "anthropic", { skills: SKILLS, pinVersions: true }).map((call) => call.skill),
    ).toEqual([{ name: "echo", version: "1.0.0" }, undefined]);
  });

  it("returns no calls for a plain text answer or a response of another shape", () => {
    const text = {
      choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
    };
    expect(extractToolCalls(text, "openai-chat")).toEqual([]);
    expect(extractToolCalls(null, "anthropic")).toEqual([]);
    expect(extractToolCalls(anthropicResponse, "gemini")).toEqual([]);
  });

  it("rejects an unknown format with TOOL_FORMAT_INVALID", () => {
    expect(() => extractToolCalls(chatResponse, "chat" as never)).toThrowError(
      expect.objectContaining({ code: "TOOL_FORMAT_INVALID" }),
    );
  });
});

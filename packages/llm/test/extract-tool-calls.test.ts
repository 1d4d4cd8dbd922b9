import { extractToolCalls } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

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
            function: { name: "skillbox_echo", arguments: '{"msg":"hi"}' },
          },
          {
            id: "call_time",
            type: "function",
            function: { name: "get_time", arguments: '{"zone":"UTC"}' },
          },
          {
            id: "call_bad",
            type: "function",
            function: { name: "skillbox_echo_v1_0_0", arguments: '{"msg": "cut' },
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
      name: "skillbox_acme_sweather",
      arguments: '{"city":"Paris"}',
      status: "completed",
    },
    {
      type: "function_call",
      id: "fc_2",
      call_id: "call_empty",
      name: "skillbox_github_dissues",
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
    { type: "tool_use", id: "toolu_01A", name: "skillbox_acme_sweather", input: { city: "Paris" } },
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
          { functionCall: { name: "skillbox_echo", args: { msg: "one" } } },
          { functionCall: { name: "skillbox_echo", args: { msg: "two" } } },
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
    const [echo, time, bad] = extractToolCalls(chatResponse, "openai-chat");
    expect(echo).toEqual({
      id: "call_echo",
      name: "skillbox_echo",
      arguments: { msg: "hi" },
      skill: { name: "echo" },
    });
    expect(time).toEqual({ id: "call_time", name: "get_time", arguments: { zone: "UTC" } });
    expect(bad).toMatchObject({
      id: "call_bad",
      arguments: '{"msg": "cut',
      skill: { name: "echo", version: "1.0.0" },
      error: expect.stringContaining("not valid JSON"),
    });
  });

  it("reads Responses API function_call items by call_id and treats empty arguments as {}", () => {
    expect(extractToolCalls(responsesResponse, "openai-responses")).toEqual([
      {
        id: "call_weather",
        name: "skillbox_acme_sweather",
        arguments: { city: "Paris" },
        skill: { name: "@acme/weather" },
      },
      { id: "call_empty", name: "skillbox_github_dissues", arguments: {}, skill: { name: "github.issues" } },
    ]);
  });

  it("reads Anthropic tool_use blocks", () => {
    expect(extractToolCalls(anthropicResponse, "anthropic")).toEqual([
      {
        id: "toolu_01A",
        name: "skillbox_acme_sweather",
        arguments: { city: "Paris" },
        skill: { name: "@acme/weather" },
      },
      { id: "toolu_01B", name: "get_time", arguments: {} },
    ]);
  });

  it("reads Gemini functionCall parts, making up ids from name and position when absent", () => {
    expect(extractToolCalls(geminiResponse, "gemini")).toEqual([
      { id: "skillbox_echo-0", name: "skillbox_echo", arguments: { msg: "one" }, skill: { name: "echo" } },
      { id: "skillbox_echo-1", name: "skillbox_echo", arguments: { msg: "two" }, skill: { name: "echo" } },
      { id: "fc-gemini-7", name: "get_time", arguments: { zone: "CET" } },
    ]);
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

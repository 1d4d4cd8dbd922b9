import { type ToolCall, type ToolResult, toToolResults } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

const echoCall: ToolCall = {
  id: "call_1",
  name: "echo",
  arguments: { msg: "hi" },
  skill: { name: "echo" },
};
const failedCall: ToolCall = {
  id: "call_2",
  name: "limited",
  arguments: {},
  skill: { name: "limited" },
};
const clientCall: ToolCall = { id: "call_3", name: "get_time", arguments: {} };

const results: ToolResult[] = [
  { call: echoCall, handled: true, ok: true, output: { echoed: "hi" }, executionId: "execution-1" },
  { call: failedCall, handled: true, ok: false, error: { code: "RATE_LIMITED", message: "slow down" } },
  { call: clientCall, handled: false, ok: false },
];

describe("toToolResults", () => {
  it("writes Chat tool messages for handled results only", () => {
    expect(toToolResults(results, "openai-chat")).toEqual([
      { role: "tool", tool_call_id: "call_1", content: '{"echoed":"hi"}' },
      {
        role: "tool",
        tool_call_id: "call_2",
        content: '{"error":{"code":"RATE_LIMITED","message":"slow down"}}',
      },
    ]);
  });

  it("writes Responses function_call_output items", () => {
    expect(toToolResults(results, "openai-responses")).toEqual([
      { type: "function_call_output", call_id: "call_1", output: '{"echoed":"hi"}' },
      {
        type: "function_call_output",
        call_id: "call_2",
        output: '{"error":{"code":"RATE_LIMITED","message":"slow down"}}',
      },
    ]);
  });

  it("writes one Anthropic user message of tool_result blocks, marking failures", () => {
    expect(toToolResults(results, "anthropic")).toEqual([
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: '{"echoed":"hi"}' },
          {
            type: "tool_result",
            tool_use_id: "call_2",
            content: '{"error":{"code":"RATE_LIMITED","message":"slow down"}}',
            is_error: true,
          },
        ],
      },
    ]);
  });

  it("writes Gemini functionResponse parts, echoing only ids Gemini sent", () => {
    const geminiResults: ToolResult[] = [
      { call: { ...echoCall, id: "echo-0" }, handled: true, ok: true, output: "hi" },
      {
        call: { ...failedCall, id: "gemini-id-9" },
        handled: true,
        ok: false,
        error: { code: "X", message: "y" },
      },
    ];
    expect(toToolResults(geminiResults, "gemini")).toEqual([
      {
        role: "user",
        parts: [
          { functionResponse: { name: "echo", response: { output: "hi" } } },
          {
            functionResponse: {
              name: "limited",
              response: { error: { code: "X", message: "y" } },
              id: "gemini-id-9",
            },
          },
        ],
      },
    ]);
  });

  it("writes nothing when no result was handled and a skill without output as null", () => {
    expect(toToolResults([results[2] as ToolResult], "anthropic")).toEqual([]);
    expect(toToolResults([{ call: echoCall, handled: true, ok: true }], "openai-chat")).toEqual([
      { role: "tool", tool_call_id: "call_1", content: "null" },
    ]);
  });
});

import { ToolCallAccumulator } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

function chatChunk(toolCalls: unknown[] | undefined, extra: Record<string, unknown> = {}) {
  return {
    id: "chatcmpl-stream",
    object: "chat.completion.chunk",
    created: 1_764_400_000,
    model: "gpt-4o",
    choices: [
      {
        index: 0,
        delta: toolCalls === undefined ? extra : { tool_calls: toolCalls, ...extra },
        finish_reason: null,
      },
    ],
  };
}

/** The skills the streamed tools were listed from. */
const SKILLS = [
  { name: "echo", version: "1.0.0" },
  { name: "@acme/weather", version: "1.0.0" },
];

describe("ToolCallAccumulator", () => {
  it("joins OpenAI Chat deltas of two interleaved calls split mid-argument", () => {
    const accumulator = new ToolCallAccumulator("openai-chat", { skills: SKILLS });
    const chunks = [
      chatChunk(undefined, { role: "assistant", content: null }),
      chatChunk([{ index: 0, id: "call_a", type: "function", function: { name: "echo", arguments: "" } }]),
      chatChunk([{ index: 0, function: { arguments: '{"ms' } }]),
      chatChunk([
        { index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: '{"zo' } },
      ]),
      chatChunk([{ index: 0, function: { arguments: 'g":"caf\\u00e' } }]),
      chatChunk([{ index: 1, function: { arguments: 'ne":"UTC"}' } }]),
      chatChunk([{ index: 0, function: { arguments: '9 \\"ok\\""}' } }]),
      { ...chatChunk(undefined), choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
      { id: "chatcmpl-stream", object: "chat.completion.chunk", choices: [], usage: { total_tokens: 9 } },
    ];
    for (const chunk of chunks) accumulator.push(chunk);
    expect(accumulator.toolCalls()).toEqual([
      { id: "call_a", name: "echo", arguments: { msg: 'café "ok"' }, skill: { name: "echo" } },
      { id: "call_b", name: "get_time", arguments: { zone: "UTC" } },
    ]);
  });

  it("reports a call whose streamed arguments never became valid JSON", () => {
    const accumulator = new ToolCallAccumulator("openai-chat");
    accumulator.push(
      chatChunk([{ index: 0, id: "call_a", function: { name: "echo", arguments: '{"msg":' } }]),
    );
    const [call] = accumulator.toolCalls();
    expect(call?.error).toContain("not valid JSON");
    expect(call?.arguments).toBe('{"msg":');
  });

  it("joins Anthropic input_json_delta events per content block", () => {
    const accumulator = new ToolCallAccumulator("anthropic", { skills: SKILLS });
    const events = [
      { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [] } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me check." } },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_1", name: "acme__weather", input: {} },
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: '{"city": "Pa' },
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'ris"}' } },
      { type: "content_block_stop", index: 1 },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
      },
      { type: "content_block_stop", index: 2 },
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 40 },
      },
      { type: "message_stop" },
    ];
    for (const event of events) accumulator.push(event);
    expect(accumulator.toolCalls()).toEqual([
      {
        id: "toolu_1",
        name: "acme__weather",
        arguments: { city: "Paris" },
        skill: { name: "@acme/weather" },
      },
      { id: "toolu_2", name: "get_time", arguments: {} },
    ]);
  });

  it("accepts only the streaming formats", () => {
    expect(() => new ToolCallAccumulator("gemini" as never)).toThrowError(
      expect.objectContaining({ code: "TOOL_FORMAT_INVALID" }),
    );
  });
});

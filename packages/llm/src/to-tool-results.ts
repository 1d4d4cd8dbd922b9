import type { ToolResult } from "./execute-tool-calls.js";
import { isSynthesisedToolCallId } from "./is-synthesised-tool-call-id.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";

/** What the model reads: the output on success, `{ error: { code, message, data? } }` (no stack) on failure. */
function resultPayload(result: ToolResult): unknown {
  return result.ok ? (result.output ?? null) : { error: result.error };
}

/** JSON text of a payload; `undefined` (no output) is sent as `null` so the text is never empty. */
function resultText(result: ToolResult): string {
  return JSON.stringify(resultPayload(result)) ?? "null";
}

/**
 * The handled results as the messages (or input items) that answer the tool calls in the next
 * request. Unhandled results (client tools) are left out — the caller adds its own — and so are
 * calls awaiting approval (`approval` set): `resolveToolApprovals` gives their results.
 *
 * - `openai-chat`: one `{ role: "tool", tool_call_id, content }` message per result
 * - `openai-responses`: one `{ type: "function_call_output", call_id, output }` item per result
 * - `anthropic`: one `{ role: "user", content: [tool_result blocks] }` message (Anthropic wants
 *   all results of a turn in one user message), `is_error: true` on failures
 * - `gemini`: one `{ role: "user", parts: [{ functionResponse: { name, response, id? } }] }`
 *   content, `response` being `{ output }` or `{ error }` as Gemini's docs name them
 *
 * Contents are JSON text: the output on success, `{ "error": { code, message, data? } }` on
 * failure — the error as `executeToolCalls` gave it, core's caller view without host details.
 */
export function toToolResults(results: ToolResult[], format: ToolFormat): unknown[] {
  assertToolFormat(format);
  const handled = results.filter((result) => result.handled && result.approval === undefined);
  if (handled.length === 0) return [];
  switch (format) {
    case "openai-chat":
      return handled.map((result) => ({
        role: "tool",
        tool_call_id: result.call.id,
        content: resultText(result),
      }));
    case "openai-responses":
      return handled.map((result) => ({
        type: "function_call_output",
        call_id: result.call.id,
        output: resultText(result),
      }));
    case "anthropic":
      return [
        {
          role: "user",
          content: handled.map((result) => ({
            type: "tool_result",
            tool_use_id: result.call.id,
            content: resultText(result),
            ...(result.ok ? {} : { is_error: true }),
          })),
        },
      ];
    case "gemini":
      return [
        {
          role: "user",
          parts: handled.map((result) => ({
            functionResponse: {
              name: result.call.name,
              response: result.ok ? { output: result.output ?? null } : { error: result.error },
              // Synthesised ids (`${name}-${index}`) were never Gemini's, so they are not sent back.
              ...(isSynthesisedToolCallId(result.call) ? {} : { id: result.call.id }),
            },
          })),
        },
      ];
  }
}

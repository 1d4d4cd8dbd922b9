import type { ToolCall } from "./tool-call.js";

/**
 * True for the ids `extractToolCalls` makes up for Gemini calls that had none (`${name}-${index}`,
 * or empty): not the model's, so they are neither sent back to it nor recorded as its call id.
 *
 * @internal
 */
export function isSynthesisedToolCallId(call: Pick<ToolCall, "id" | "name">): boolean {
  const prefix = `${call.name}-`;
  return call.id === "" || (call.id.startsWith(prefix) && /^\d+$/.test(call.id.slice(prefix.length)));
}

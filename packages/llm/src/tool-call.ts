import type { ToolNameMap } from "@skillbox/core";

/** One tool call of a model response, the same shape for every format. */
export interface ToolCall {
  /** The provider's call id (Gemini calls without one get `${name}-${index}`). */
  id: string;
  name: string;
  /** parsed arguments */
  arguments: unknown;
  /** set when the arguments were not valid JSON */
  error?: string;
  /** the skill the name stands for, when the call was read with the offered skills' tool names */
  skill?: { name: string; version?: string };
}

/**
 * A {@link ToolCall} from its raw parts. `rawArguments` is a JSON string (OpenAI, streamed
 * Anthropic input) or an already parsed value (Anthropic, Gemini). An empty string means no
 * arguments (`{}`), which is what the providers send for a tool without parameters. With `names`
 * (the tool names the call's tools were listed with), a skill's call carries `skill`.
 */
export function createToolCall(
  id: string,
  name: string,
  rawArguments: unknown,
  names?: ToolNameMap,
): ToolCall {
  const call: ToolCall = { id, name, arguments: {} };
  if (typeof rawArguments === "string") {
    if (rawArguments.trim() !== "") {
      try {
        call.arguments = JSON.parse(rawArguments);
      } catch (error) {
        call.arguments = rawArguments;
        call.error = `The arguments of tool call ${id} (${name}) are not valid JSON: ${(error as Error).message}`;
      }
    }
  } else if (rawArguments !== undefined && rawArguments !== null) {
    call.arguments = rawArguments;
  }
  const skill = names?.reference(name);
  if (skill !== undefined) call.skill = skill;
  return call;
}

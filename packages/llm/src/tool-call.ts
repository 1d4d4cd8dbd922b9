import { decodeToolName } from "./tool-name.js";

/** One tool call of a model response, the same shape for every format. */
export interface ToolCall {
  /** The provider's call id (Gemini calls without one get `${name}-${index}`). */
  id: string;
  name: string;
  /** parsed arguments */
  arguments: unknown;
  /** set when the arguments were not valid JSON */
  error?: string;
  /** the decoded skill, if the name is a skill tool name */
  skill?: { name: string; version?: string };
}

/**
 * A {@link ToolCall} from its raw parts. `rawArguments` is a JSON string (OpenAI, streamed
 * Anthropic input) or an already parsed value (Anthropic, Gemini). An empty string means no
 * arguments (`{}`), which is what the providers send for a tool without parameters.
 */
export function createToolCall(id: string, name: string, rawArguments: unknown): ToolCall {
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
  const skill = decodeToolName(name);
  if (skill !== undefined) call.skill = skill;
  return call;
}

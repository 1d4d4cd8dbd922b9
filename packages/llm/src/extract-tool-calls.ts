import type { ToolNameMap } from "@skillbox/core";
import { asArray, asRecord, asString } from "./read-fields.js";
import { createToolCall, type ToolCall } from "./tool-call.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";
import { type NamedSkill, type ToolNameOptions, toolNameMap } from "./tool-name.js";

/** Options of {@link extractToolCalls}. */
export interface ExtractToolCallsOptions extends ToolNameOptions {
  /** The skills offered as tools (with the `pinVersions` of `toTools`): their calls carry `skill`. */
  skills?: ReadonlyArray<NamedSkill>;
}

function fromOpenAiChat(response: Record<string, unknown>, names?: ToolNameMap): ToolCall[] {
  return asArray(response.choices).flatMap((choice) =>
    asArray(asRecord(asRecord(choice).message).tool_calls)
      .map(asRecord)
      .filter((toolCall) => toolCall.type === undefined || toolCall.type === "function")
      .map((toolCall) => {
        const fn = asRecord(toolCall.function);
        return createToolCall(asString(toolCall.id), asString(fn.name), fn.arguments, names);
      }),
  );
}

function fromOpenAiResponses(response: Record<string, unknown>, names?: ToolNameMap): ToolCall[] {
  return asArray(response.output)
    .map(asRecord)
    .filter((item) => item.type === "function_call")
    .map((item) => createToolCall(asString(item.call_id), asString(item.name), item.arguments, names));
}

function fromAnthropic(response: Record<string, unknown>, names?: ToolNameMap): ToolCall[] {
  return asArray(response.content)
    .map(asRecord)
    .filter((block) => block.type === "tool_use")
    .map((block) => createToolCall(asString(block.id), asString(block.name), block.input, names));
}

function fromGemini(response: Record<string, unknown>, names?: ToolNameMap): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const candidate of asArray(response.candidates)) {
    for (const part of asArray(asRecord(asRecord(candidate).content).parts)) {
      const functionCall = asRecord(part).functionCall;
      if (functionCall === undefined) continue;
      const { name, args, id } = asRecord(functionCall);
      const toolName = asString(name);
      // Older Gemini models send no call id; the position keeps parallel calls of one tool apart.
      calls.push(createToolCall(asString(id, `${toolName}-${calls.length}`), toolName, args, names));
    }
  }
  return calls;
}

/**
 * The tool calls of a (non-streamed) model response, in the order the model made them:
 *
 * - `openai-chat`: `choices[].message.tool_calls[]` (arguments are a JSON string)
 * - `openai-responses`: `output[]` items of type `function_call` (`call_id` is the id)
 * - `anthropic`: `content[]` blocks of type `tool_use` (`input` is already an object)
 * - `gemini`: `candidates[].content.parts[].functionCall` (ids `${name}-${index}` when absent)
 *
 * Arguments that are not valid JSON do not throw: the call carries `error` and the raw text, so
 * the model can be told and retry. Given the offered `skills`, calls of their tool names carry
 * `skill` (read through `toolNameMap`, never guessed from the spelling).
 */
export function extractToolCalls(
  response: unknown,
  format: ToolFormat,
  options: ExtractToolCallsOptions = {},
): ToolCall[] {
  assertToolFormat(format);
  const record = asRecord(response);
  const names = options.skills === undefined ? undefined : toolNameMap(options.skills, options);
  switch (format) {
    case "openai-chat":
      return fromOpenAiChat(record, names);
    case "openai-responses":
      return fromOpenAiResponses(record, names);
    case "anthropic":
      return fromAnthropic(record, names);
    case "gemini":
      return fromGemini(record, names);
  }
}

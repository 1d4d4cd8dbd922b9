import { asArray, asRecord, asString } from "./read-fields.js";
import { createToolCall, type ToolCall } from "./tool-call.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";

function fromOpenAiChat(response: Record<string, unknown>): ToolCall[] {
  return asArray(response.choices).flatMap((choice) =>
    asArray(asRecord(asRecord(choice).message).tool_calls)
      .map(asRecord)
      .filter((toolCall) => toolCall.type === undefined || toolCall.type === "function")
      .map((toolCall) => {
        const fn = asRecord(toolCall.function);
        return createToolCall(asString(toolCall.id), asString(fn.name), fn.arguments);
      }),
  );
}

function fromOpenAiResponses(response: Record<string, unknown>): ToolCall[] {
  return asArray(response.output)
    .map(asRecord)
    .filter((item) => item.type === "function_call")
    .map((item) => createToolCall(asString(item.call_id), asString(item.name), item.arguments));
}

function fromAnthropic(response: Record<string, unknown>): ToolCall[] {
  return asArray(response.content)
    .map(asRecord)
    .filter((block) => block.type === "tool_use")
    .map((block) => createToolCall(asString(block.id), asString(block.name), block.input));
}

function fromGemini(response: Record<string, unknown>): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const candidate of asArray(response.candidates)) {
    for (const part of asArray(asRecord(asRecord(candidate).content).parts)) {
      const functionCall = asRecord(part).functionCall;
      if (functionCall === undefined) continue;
      const { name, args, id } = asRecord(functionCall);
      const toolName = asString(name);
      // Older Gemini models send no call id; the position keeps parallel calls of one tool apart.
      calls.push(createToolCall(asString(id, `${toolName}-${calls.length}`), toolName, args));
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
 * the model can be told and retry. Calls whose name is a skill tool name carry `skill`.
 */
export function extractToolCalls(response: unknown, format: ToolFormat): ToolCall[] {
  assertToolFormat(format);
  const record = asRecord(response);
  switch (format) {
    case "openai-chat":
      return fromOpenAiChat(record);
    case "openai-responses":
      return fromOpenAiResponses(record);
    case "anthropic":
      return fromAnthropic(record);
    case "gemini":
      return fromGemini(record);
  }
}

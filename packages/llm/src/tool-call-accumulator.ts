import type { ExtractToolCallsOptions } from "./extract-tool-calls.js";
import { asArray, asRecord, asString } from "./read-fields.js";
import { createToolCall, type ToolCall } from "./tool-call.js";
import { assertToolFormat } from "./tool-format.js";
import { toolNameMap } from "./tool-name.js";

interface PartialToolCall {
  id: string;
  name: string;
  /** The argument JSON as received so far, in pieces to avoid quadratic concatenation. */
  argumentPieces: string[];
  /** Anthropic's `tool_use` start block may already carry a complete `input`. */
  startInput: unknown;
}

const STREAMING_FORMATS: ReadonlySet<string> = new Set(["openai-chat", "anthropic"]);

/**
 * Collects the tool calls of a streamed response, chunk by chunk, keyed by the stream's
 * `index` so interleaved calls and arguments split anywhere (mid-string, mid-escape) come out
 * whole:
 *
 * - `openai-chat`: chunks whose `choices[0].delta.tool_calls[]` carry `{ index, id?, function: { name?, arguments? } }`
 * - `anthropic`: `content_block_start` (a `tool_use` block), `content_block_delta`
 *   (`input_json_delta.partial_json`) and `content_block_stop` events
 *
 * Other chunks (text deltas, usage, `message_start`, …) are ignored, so every chunk of the
 * stream can be pushed.
 */
export class ToolCallAccumulator {
  private readonly format: "openai-chat" | "anthropic";
  private readonly names: ReturnType<typeof toolNameMap> | undefined;
  private readonly calls = new Map<number, PartialToolCall>();

  /** With the offered `skills` (and `pinVersions`, as given to `toTools`), skill calls carry `skill`. */
  constructor(format: "openai-chat" | "anthropic", options: ExtractToolCallsOptions = {}) {
    this.names = options.skills === undefined ? undefined : toolNameMap(options.skills, options);
    this.format = assertToolFormat(format, STREAMING_FORMATS) as "openai-chat" | "anthropic";
  }

  /** Adds one stream chunk (OpenAI Chat) or event (Anthropic). */
  push(chunk: unknown): void {
    if (this.format === "openai-chat") this.pushChatChunk(asRecord(chunk));
    else this.pushAnthropicEvent(asRecord(chunk));
  }

  /** The tool calls so far, ordered by stream index, with arguments parsed as in `extractToolCalls`. */
  toolCalls(): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([, call]) => {
        const text = call.argumentPieces.join("");
        const rawArguments = text === "" && call.startInput !== undefined ? call.startInput : text;
        return createToolCall(call.id, call.name, rawArguments, this.names);
      });
  }

  private callAt(index: number): PartialToolCall {
    let call = this.calls.get(index);
    if (call === undefined) {
      call = { id: "", name: "", argumentPieces: [], startInput: undefined };
      this.calls.set(index, call);
    }
    return call;
  }

  private pushChatChunk(chunk: Record<string, unknown>): void {
    for (const choice of asArray(chunk.choices)) {
      // Only the first choice is the response; `n > 1` streams are not tool loops.
      if ((asRecord(choice).index ?? 0) !== 0) continue;
      for (const delta of asArray(asRecord(asRecord(choice).delta).tool_calls).map(asRecord)) {
        if (typeof delta.index !== "number") continue;
        const call = this.callAt(delta.index);
        if (typeof delta.id === "string" && delta.id !== "") call.id = delta.id;
        const fn = asRecord(delta.function);
        // The name arrives whole in the first delta; later deltas omit it (or send "").
        if (typeof fn.name === "string" && fn.name !== "") call.name = fn.name;
        if (typeof fn.arguments === "string") call.argumentPieces.push(fn.arguments);
      }
    }
  }

  private pushAnthropicEvent(event: Record<string, unknown>): void {
    if (typeof event.index !== "number") return;
    if (event.type === "content_block_start") {
      const block = asRecord(event.content_block);
      if (block.type !== "tool_use") return;
      const call = this.callAt(event.index);
      call.id = asString(block.id);
      call.name = asString(block.name);
      // The start block carries `input: {}`; the real input streams in as JSON deltas.
      const input = asRecord(block.input);
      call.startInput = Object.keys(input).length > 0 ? input : undefined;
    } else if (event.type === "content_block_delta") {
      const delta = asRecord(event.delta);
      const call = this.calls.get(event.index);
      if (call === undefined || delta.type !== "input_json_delta") return;
      call.argumentPieces.push(asString(delta.partial_json));
    }
  }
}

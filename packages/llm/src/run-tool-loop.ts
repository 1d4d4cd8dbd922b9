import type { Skill, SkillExecutor } from "@skillbox/core";
import { executeToolCalls, type ToolResult } from "./execute-tool-calls.js";
import { extractToolCalls } from "./extract-tool-calls.js";
import { asArray, asRecord } from "./read-fields.js";
import { toToolResults } from "./to-tool-results.js";
import { toTools } from "./to-tools.js";
import type { ToolCall } from "./tool-call.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";
import { decodeToolName } from "./tool-name.js";

/** Options of {@link runToolLoop}. */
export interface RunToolLoopOptions {
  format: ToolFormat;
  /** Sends one request to the model and returns its (non-streamed) response. */
  send: (request: { messages: unknown[]; tools: unknown[] }) => Promise<unknown>;
  /** The conversation so far, in the format's message shape (Gemini: `contents`; Responses: input items). */
  messages: unknown[];
  /** The skills offered as tools; calls to any other skill are refused with `SKILL_NOT_FOUND`. */
  skills: Skill[];
  executor: SkillExecutor;
  /** The caller's owner id the skills run as. */
  apiKeyId?: string;
  /** Most model requests to make (default 8). */
  maxSteps?: number;
  signal?: AbortSignal;
}

/** What {@link runToolLoop} ended with. */
export interface ToolLoopResult {
  /** The last model response. */
  response: unknown;
  /** The conversation, ready for the next request (see `stoppedBecause` for what it ends with). */
  messages: unknown[];
  /** Model requests made. */
  steps: number;
  stoppedBecause: "no-tool-calls" | "client-tools" | "max-steps";
}

const DEFAULT_MAX_STEPS = 8;

/** The assistant turn of a response as the next request expects it in `messages`. */
function assistantTurn(response: unknown, format: ToolFormat): unknown[] {
  const record = asRecord(response);
  switch (format) {
    case "openai-chat":
      return [asRecord(asArray(record.choices)[0]).message];
    case "openai-responses":
      return asArray(record.output);
    case "anthropic":
      return [{ role: "assistant", content: record.content }];
    case "gemini":
      return [asRecord(asArray(record.candidates)[0]).content];
  }
}

/** True when `skill` (as decoded from a tool name) is one of the offered skills. */
function isOffered(skill: { name: string; version?: string }, skills: Skill[]): boolean {
  return skills.some(
    (offered) =>
      offered.name === skill.name && (skill.version === undefined || offered.version === skill.version),
  );
}

/**
 * Runs the tool-calling loop of one conversation: sends the messages with the skills as tools,
 * runs the skill calls of the response through the executor, appends the assistant turn and
 * the tool results, and sends again — until the model answers without tool calls, asks for a
 * tool of the client, or `maxSteps` requests were made.
 *
 * - `no-tool-calls`: `messages` ends with the last tool results; the final `response` is not
 *   appended (append its assistant turn yourself to keep the conversation going).
 * - `client-tools`: the response also called tools that are not skills. Its skill calls have
 *   run; `messages` ends with the assistant turn and the skill results, and the caller appends
 *   the results of its own tools (for Anthropic, tool_result blocks in the next user message —
 *   the API merges consecutive user turns) before sending again.
 * - `max-steps`: the last response's tool calls are not run (the budget is a safety net, not a
 *   place to run more tools); `messages` ends before that response.
 *
 * Calls to skills that were not offered (a model guessing a name) are refused with
 * `SKILL_NOT_FOUND` and never run; malformed arguments become `TOOL_ARGUMENTS_INVALID` results
 * the model sees and can correct.
 */
export async function runToolLoop(options: RunToolLoopOptions): Promise<ToolLoopResult> {
  const format = assertToolFormat(options.format);
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const tools = toTools(options.skills, format);
  const messages = [...options.messages];
  let steps = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const response = await options.send({ messages: [...messages], tools });
    steps += 1;
    const calls = extractToolCalls(response, format).map((call) => withSkill(call, options.skills));
    // The final answer is not appended: `response` holds it, and callers differ in what they keep of it.
    if (calls.length === 0) return { response, messages, steps, stoppedBecause: "no-tool-calls" };
    if (steps >= maxSteps) return { response, messages, steps, stoppedBecause: "max-steps" };
    const results = await runCalls(calls, options);
    messages.push(...assistantTurn(response, format), ...toToolResults(results, format));
    if (results.some((result) => !result.handled)) {
      return { response, messages, steps, stoppedBecause: "client-tools" };
    }
  }
}

/** Decodes hashed tool names through the offered skills, which `extractToolCalls` cannot. */
function withSkill(call: ToolCall, skills: Skill[]): ToolCall {
  if (call.skill !== undefined) return call;
  const skill = decodeToolName(call.name, skills);
  return skill === undefined ? call : { ...call, skill };
}

async function runCalls(calls: ToolCall[], options: RunToolLoopOptions): Promise<ToolResult[]> {
  const offered = calls.filter((call) => call.skill === undefined || isOffered(call.skill, options.skills));
  const executed = await executeToolCalls(offered, {
    executor: options.executor,
    ...(options.apiKeyId === undefined ? {} : { apiKeyId: options.apiKeyId }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const byCall = new Map(executed.map((result) => [result.call, result]));
  return calls.map(
    (call) =>
      byCall.get(call) ?? {
        call,
        handled: true,
        ok: false,
        error: {
          code: "SKILL_NOT_FOUND",
          message: `The tool ${call.name} was not offered in this conversation`,
        },
      },
  );
}

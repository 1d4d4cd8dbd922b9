import type { Skill, SkillExecutor } from "@skillbox/core";
import { executeToolCalls, type ToolResult } from "./execute-tool-calls.js";
import { extractToolCalls } from "./extract-tool-calls.js";
import { asArray, asRecord } from "./read-fields.js";
import { toToolResults } from "./to-tool-results.js";
import { toTools } from "./to-tools.js";
import type { ToolApprovalRequest } from "./tool-approval.js";
import type { ToolCall } from "./tool-call.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";

/** Options of {@link runToolLoop}. */
export interface RunToolLoopOptions {
  format: ToolFormat;
  /** Sends one request to the model and returns its (non-streamed) response. */
  send: (request: { messages: unknown[]; tools: unknown[] }) => Promise<unknown>;
  /** The conversation so far, in the format's message shape (Gemini: `contents`; Responses: input items). */
  messages: unknown[];
  /** The skills offered as tools; any other tool name is the client's and runs no skill. */
  skills: Skill[];
  executor: SkillExecutor;
  /** The caller's owner id the skills run as. */
  apiKeyId?: string;
  /** Most model requests to make (default 8). */
  maxSteps?: number;
  signal?: AbortSignal;
}

/**
 * A loop paused at tool calls that await approval: everything `resumeToolLoop` needs to go on,
 * as plain JSON — store it (a session, a database row) and resume in another process.
 */
export interface ToolLoopState {
  format: ToolFormat;
  /** The conversation up to and including the assistant turn whose calls are pending. */
  messages: unknown[];
  /** The response of that turn. */
  response: unknown;
  /** The turn's results in call order; the pending ones carry `approval`. */
  results: ToolResult[];
  /** Model requests made so far. */
  steps: number;
}

/** What {@link runToolLoop} ended with. */
export interface ToolLoopResult {
  /** The last model response. */
  response: unknown;
  /** The conversation, ready for the next request (see `stoppedBecause` for what it ends with). */
  messages: unknown[];
  /** Model requests made. */
  steps: number;
  stoppedBecause: "no-tool-calls" | "client-tools" | "max-steps" | "awaiting-approval";
  /** With `awaiting-approval`: the calls a person must decide, in call order. */
  pendingApprovals?: ToolApprovalRequest[];
  /** With `awaiting-approval`: what `resumeToolLoop` takes, with the decisions. */
  state?: ToolLoopState;
}

/** What the loop itself needs (a resume has no `messages`: its state has them). */
export type ToolLoopSettings = Omit<RunToolLoopOptions, "messages">;

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
 * - `awaiting-approval`: a skill call waits for a person (its execution is `awaiting_approval`).
 *   Its other calls have run; `pendingApprovals` lists what to decide and `state` (plain JSON)
 *   is what `resumeToolLoop` takes with the decisions. `messages` ends with the assistant turn
 *   and no results: it is not ready to send.
 *
 * Tool names are read through `toolNameMap(skills)` alone: a name that is no offered skill's
 * tool (a model guessing one, a skill that exists but was not offered) is the client's tool and
 * never runs a skill — it ends the loop with `client-tools`. Malformed arguments become
 * `TOOL_ARGUMENTS_INVALID` results the model sees and can correct.
 */
export async function runToolLoop(options: RunToolLoopOptions): Promise<ToolLoopResult> {
  const format = assertToolFormat(options.format);
  return continueToolLoop(options, format, [...options.messages], 0);
}

/** Sends and runs turns from `messages` until the loop stops; `steps` requests were made before. */
export async function continueToolLoop(
  options: ToolLoopSettings,
  format: ToolFormat,
  messages: unknown[],
  stepsBefore: number,
): Promise<ToolLoopResult> {
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const tools = toTools(options.skills, format);
  let steps = stepsBefore;
  for (;;) {
    options.signal?.throwIfAborted();
    const response = await options.send({ messages: [...messages], tools });
    steps += 1;
    const calls = extractToolCalls(response, format, { skills: options.skills });
    // The final answer is not appended: `response` holds it, and callers differ in what they keep of it.
    if (calls.length === 0) return { response, messages, steps, stoppedBecause: "no-tool-calls" };
    if (steps >= maxSteps) return { response, messages, steps, stoppedBecause: "max-steps" };
    const results = await runCalls(calls, options);
    messages.push(...assistantTurn(response, format));
    const stop = answerTurn({ format, response, messages, results, steps });
    if (stop !== undefined) return stop;
  }
}

/**
 * Appends a turn's results to `messages` (which ends with its assistant turn) and says whether
 * the loop stops there: paused at calls awaiting approval (nothing appended: a provider wants
 * every call of a turn answered at once), at client tools, or not at all (`undefined`).
 */
export function answerTurn(turn: {
  format: ToolFormat;
  response: unknown;
  messages: unknown[];
  results: ToolResult[];
  steps: number;
}): ToolLoopResult | undefined {
  const { format, response, messages, results, steps } = turn;
  const pendingApprovals = results.flatMap((result) =>
    result.approval === undefined ? [] : [result.approval],
  );
  if (pendingApprovals.length > 0) {
    return {
      response,
      messages,
      steps,
      stoppedBecause: "awaiting-approval",
      pendingApprovals,
      state: { format, messages: [...messages], response, results, steps },
    };
  }
  messages.push(...toToolResults(results, format));
  if (results.some((result) => !result.handled)) {
    return { response, messages, steps, stoppedBecause: "client-tools" };
  }
  return undefined;
}

/** Runs the skill calls; `skills` makes every other name the client's (`handled: false`). */
function runCalls(calls: ToolCall[], options: ToolLoopSettings): Promise<ToolResult[]> {
  return executeToolCalls(calls, {
    executor: options.executor,
    skills: options.skills,
    ...(options.apiKeyId === undefined ? {} : { apiKeyId: options.apiKeyId }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

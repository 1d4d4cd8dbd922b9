import { SkillboxError } from "@skillbox/core";
import type { ToolResult } from "./execute-tool-calls.js";
import { asRecord } from "./read-fields.js";
import { resolveToolApprovals } from "./resolve-tool-approvals.js";
import {
  answerTurn,
  continueToolLoop,
  type ToolLoopResult,
  type ToolLoopSettings,
  type ToolLoopState,
} from "./run-tool-loop.js";
import type { ToolApprovalDecision } from "./tool-approval.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";

/** Options of {@link resumeToolLoop}: those of `runToolLoop` but `messages`, plus the state and decisions. */
export interface ResumeToolLoopOptions extends ToolLoopSettings {
  /** The `state` of a `runToolLoop` (or `resumeToolLoop`) that stopped with `awaiting-approval`. */
  state: ToolLoopState;
  /** One decision per pending approval. */
  decisions: ToolApprovalDecision[];
  /** Who decided, for decisions that name nobody (default: `apiKeyId`). */
  by?: string;
}

function stateInvalid(message: string): SkillboxError {
  return new SkillboxError(
    "TOOL_LOOP_STATE_INVALID",
    `state ${message}; pass the \`state\` of a loop that stopped with "awaiting-approval"`,
  );
}

/** The state, checked enough that a stored one of another loop or version fails clearly. */
function checkState(value: unknown, format: ToolFormat): ToolLoopState {
  const state = asRecord(value);
  if (state.format !== format) {
    throw stateInvalid(`is of format ${JSON.stringify(state.format)}, not "${format}"`);
  }
  if (!Array.isArray(state.messages)) throw stateInvalid("has no `messages` array");
  if (!Array.isArray(state.results)) throw stateInvalid("has no `results` array");
  if (typeof state.steps !== "number" || !Number.isInteger(state.steps) || state.steps < 1) {
    throw stateInvalid("has no whole number of `steps`");
  }
  const results = state.results as ToolResult[];
  if (!results.every((result) => typeof asRecord(asRecord(result).call).id === "string")) {
    throw stateInvalid("has a result without its `call`");
  }
  if (!results.some((result) => result.approval !== undefined)) {
    throw stateInvalid("has no call awaiting approval");
  }
  return state as unknown as ToolLoopState;
}

/**
 * Goes on with a tool loop that paused at calls awaiting approval: applies the decisions
 * (`resolveToolApprovals`: approved calls run and their results go to the model, rejected ones
 * end `rejected` and the model reads that they were refused), appends the turn's results and
 * runs the loop on as `runToolLoop` does — it may stop at `awaiting-approval` again. Steps
 * count on from the state's, so `maxSteps` bounds the whole conversation.
 *
 * Bad decisions (`TOOL_APPROVAL_NOT_FOUND`, `TOOL_APPROVAL_NOT_PENDING`,
 * `TOOL_APPROVAL_MISSING`, `INPUT_INVALID`) and a bad state (`TOOL_LOOP_STATE_INVALID`) throw
 * before anything is decided. Resuming the same state again is safe: a call decided already
 * keeps its decision, and its record gives the result.
 */
export async function resumeToolLoop(options: ResumeToolLoopOptions): Promise<ToolLoopResult> {
  const format = assertToolFormat(options.format);
  const state = checkState(options.state, format);
  options.signal?.throwIfAborted();
  const results = await resolveToolApprovals(state.results, options.decisions, {
    executor: options.executor,
    ...(options.apiKeyId === undefined ? {} : { apiKeyId: options.apiKeyId }),
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const messages = [...state.messages];
  const stop = answerTurn({ format, response: state.response, messages, results, steps: state.steps });
  if (stop !== undefined) return stop;
  return continueToolLoop(options, format, messages, state.steps);
}

import {
  type CallerError,
  isSkillboxError,
  type Skill,
  type SkillExecutor,
  type SkillRegistry,
} from "@skillbox/core";
import { executionToolResult, failedToolResult } from "./execution-tool-result.js";
import { isSynthesisedToolCallId } from "./is-synthesised-tool-call-id.js";
import { skillInputFromArguments } from "./parameters-schema.js";
import type { ToolApprovalRequest } from "./tool-approval.js";
import type { ToolCall } from "./tool-call.js";
import { type NamedSkill, type ToolNameOptions, toolNameMap } from "./tool-name.js";

/** The outcome of one tool call. */
export interface ToolResult {
  call: ToolCall;
  /** true when the call named a skill and was executed */
  handled: boolean;
  ok: boolean;
  output?: unknown;
  /**
   * Why the call failed, as core's `toCallerError` shows it to callers: code, message and data
   * without host details (no stack) — e.g. `data.cause.code` of a `HANDLER_ERROR`.
   */
  error?: CallerError;
  executionId?: string;
  /**
   * Set when the execution waits for a person (`awaiting_approval`): the call has no result for
   * the model yet (`ok: false` without `error`; `toToolResults` leaves it out) until
   * `resolveToolApprovals` answers it with the decision.
   */
  approval?: ToolApprovalRequest;
}

/** Options of {@link executeToolCalls}. */
export interface ExecuteToolCallsOptions extends ToolNameOptions {
  executor: SkillExecutor;
  /**
   * The skills offered as tools, as given to `toTools` (with its `pinVersions`): tool names are
   * read through their names. Default: every skill the caller can see — right whenever `toTools`
   * was given those, since a suffixed name (`a_b_2`) depends on the set it was made in.
   */
  skills?: ReadonlyArray<NamedSkill>;
  /** Where skills are looked up (default: the executor's registry). */
  registry?: SkillRegistry;
  /** The caller's owner id; only skills this owner can see run (default `public`, as in `execute`). */
  apiKeyId?: string;
  sessionId?: string;
  signal?: AbortSignal;
  /** Calls run at once (default 8: a model rarely asks for more in one turn, so they run in one wave). */
  concurrency?: number;
}

const DEFAULT_CONCURRENCY = 8;

async function executeOne(
  call: ToolCall,
  skill: { name: string; version?: string },
  options: ExecuteToolCallsOptions,
  registry: SkillRegistry,
): Promise<ToolResult> {
  if (call.error !== undefined) {
    return failedToolResult(call, { code: "TOOL_ARGUMENTS_INVALID", message: call.error });
  }
  const owner = options.apiKeyId ?? "public";
  // Resolved here to know whether the input was wrapped as `{ input }`; execute runs this very skill.
  const resolved: Skill | null = registry.resolveVersion(skill.name, skill.version, owner);
  if (resolved === null) {
    const reference = skill.version === undefined ? skill.name : `${skill.name}@${skill.version}`;
    return failedToolResult(call, {
      code: "SKILL_NOT_FOUND",
      message: `No skill ${reference} is available to this caller`,
    });
  }
  const input = skillInputFromArguments(resolved.schema.input, call.arguments);
  try {
    const execution = await options.executor.execute(resolved, input, {
      apiKeyId: owner,
      // The model's id for the call: the execution span's `gen_ai.tool.call.id`. Gemini gives none.
      ...(isSynthesisedToolCallId(call) ? {} : { toolCallId: call.id }),
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return executionToolResult(call, execution);
  } catch (error) {
    // `execute` rejects before an execution exists (skill removed meanwhile, executor closed).
    if (isSkillboxError(error)) return failedToolResult(call, { code: error.code, message: error.message });
    return failedToolResult(call, {
      code: "HANDLER_ERROR",
      message: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * Runs the skill tool calls of a model response through the executor — each one a normal,
 * audited execution for the caller `apiKeyId` — at most `concurrency` at a time, and returns
 * one result per call in the calls' order:
 *
 * - a call naming a skill the caller can see runs (`handled: true`, `ok` from the execution);
 * - a call naming a skill the caller cannot see (another owner's, removed, wrong version) is
 *   `handled: true, ok: false` with `SKILL_NOT_FOUND` and never runs;
 * - a call whose arguments were not valid JSON is `TOOL_ARGUMENTS_INVALID` and never runs;
 * - a call of a skill that needs approval carries `approval` (the execution waits at
 *   `awaiting_approval`) and no result yet: answer it with `resolveToolApprovals`;
 * - a call naming any other tool is `handled: false` and left for the client to run.
 *
 * Failures never reject: they become results the model can read. Tool names are read through
 * `toolNameMap` of `skills` (default: the caller's visible skills), never guessed from the spelling.
 */
export async function executeToolCalls(
  calls: ToolCall[],
  options: ExecuteToolCallsOptions,
): Promise<ToolResult[]> {
  const registry = options.registry ?? options.executor.registry;
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_CONCURRENCY));
  let names: ReturnType<typeof toolNameMap> | undefined;
  const skillOf = (call: ToolCall) => {
    if (call.skill !== undefined) return call.skill;
    names ??= toolNameMap(options.skills ?? registry.list(options.apiKeyId ?? "public"), options);
    return names.reference(call.name);
  };
  const results: ToolResult[] = new Array(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const index = next++;
      const call = calls[index] as ToolCall;
      const skill = skillOf(call);
      results[index] =
        skill === undefined
          ? { call, handled: false, ok: false }
          : await executeOne(call, skill, options, registry);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, worker));
  return results;
}

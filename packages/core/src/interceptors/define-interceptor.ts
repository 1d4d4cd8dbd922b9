import type { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionApproval, Skill, SkillExecution, SkillLogger } from "../types.js";

/** What every hook of an interceptor sees about the execution. */
export interface InterceptorContext {
  skill: Skill;
  /** The input as it currently stands (after earlier `before` hooks). */
  input: unknown;
  executionId: string;
  parentExecutionId: string | null;
  apiKeyId: string;
  sessionId: string | null;
  /** Scratch space shared by all hooks of all interceptors for this one execution. */
  state: Record<string, unknown>;
  logger: SkillLogger;
  /** The approval granted to this execution (a run resumed after approval), else null. */
  approval: ExecutionApproval | null;
  /**
   * Asks for a person's approval (in `before`): a no-op once approved; else it throws, and the
   * execution stops at `awaiting_approval` with `reason` until `approve()` or `reject()`. An
   * approved execution runs again from the first `before`, where this call then returns.
   */
  requireApproval(reason: string): void;
}

/** The outcome an `after` hook sees. */
export interface InterceptorResult {
  output: unknown;
  attempts: number;
  /** Milliseconds since the execution started. */
  duration: number;
}

/**
 * What `before` may return: nothing (continue), a new input, or an output that skips the handler.
 * `void` is part of it so that a hook that only guards (`if (…) throw deny(…)`) typechecks.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook whose body returns nothing is typed `void`
export type BeforeHookResult = void | undefined | { input: unknown } | { output: unknown };

/** What gets written to the audit trail; the `audit` hook may rewrite it (redaction). */
export interface AuditEntry {
  input?: unknown;
  output?: unknown;
}

/**
 * Selects the skills an interceptor applies to: name glob patterns (`"github.*"`), tags (any
 * of them), both (all conditions hold), or a predicate. No `match` means every skill.
 */
export type InterceptorMatch = { names?: string | string[]; tags?: string[] } | ((skill: Skill) => boolean);

/**
 * An interceptor: a plain object of optional hooks. Order on the way in is ascending `order`
 * (`before`); on the way out it is the reverse (`after`, `onError`) — like layers of an onion.
 */
export interface Interceptor {
  /** Unique name; registering another interceptor with the same name replaces it. */
  name: string;
  /** Lower runs first on the way in and last on the way out (default 0). */
  order?: number;
  match?: InterceptorMatch;
  /**
   * Runs before the handler. Return `{ input }` to rewrite the input, `{ output }` to answer
   * without running the handler, or throw `deny(...)` to refuse (status `denied`).
   */
  before?(context: InterceptorContext): BeforeHookResult | Promise<BeforeHookResult>;
  /** Runs after success. Return `{ output }` to replace the output. */
  after?(
    context: InterceptorContext,
    result: InterceptorResult,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook whose body returns nothing is typed `void`
  ): void | undefined | { output: unknown } | Promise<void | undefined | { output: unknown }>;
  /**
   * Runs after a failure. Return `{ output }` to recover (the execution then succeeds), or
   * nothing to let the error stand. Denials and cancellations cannot be recovered.
   */
  onError?(
    context: InterceptorContext,
    error: SkillboxError,
    // biome-ignore lint/suspicious/noConfusingVoidType: a hook whose body returns nothing is typed `void`
  ): void | undefined | { output: unknown } | Promise<void | undefined | { output: unknown }>;
  /**
   * Runs once the final state is known — after retries, every other hook and the output check —
   * with the execution record as `execute()` returns it. For logging and metrics: it cannot
   * change the outcome, is not awaited, and a throw or rejection is logged, never propagated.
   * Every matching interceptor's `onFinish` runs, whichever layers the execution passed.
   */
  onFinish?(context: InterceptorContext, execution: SkillExecution): void | Promise<void>;
  /**
   * Rewrites what is stored in the audit trail — redaction. The caller of the execution gets the
   * real output; a later repeat with the same idempotency key is served from the audit trail and
   * so gets the stored form. Must be synchronous.
   */
  audit?(context: InterceptorContext, entry: AuditEntry): AuditEntry;
}

/** Identity helper that gives interceptor objects their type. */
export function defineInterceptor<const T extends Interceptor>(interceptor: T): T {
  return interceptor;
}

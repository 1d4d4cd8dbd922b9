import type { Skill, SkillContext, SkillHandler } from "../types.js";

/**
 * The abort of one attempt as an emitter (the shape tinypool accepts as a task's signal). It
 * fires with `context.signal`, but listening on it creates no AbortSignal: most attempts are
 * never aborted, and a runtime that only needs to stop its work should listen here.
 */
export interface RuntimeAbort {
  /** Whether the attempt was aborted (its timeout passed, or it was cancelled). */
  readonly aborted: boolean;
  /** Why: the `SkillboxError` the attempt fails with; undefined until `aborted`. */
  readonly reason: unknown;
  /** Calls `listener` once when the attempt is aborted; never if it was already (check `aborted`). */
  once(event: "abort", listener: () => void): void;
  /** Stops telling a listener added with `once`. */
  off(event: "abort", listener: () => void): void;
}

/** What the executor hands a runtime for one attempt. */
export interface RuntimeRequest {
  skill: Skill;
  input: unknown;
  /** The handler's context; `context.signal` aborts on timeout and cancellation. */
  context: SkillContext;
  /** Fires with `context.signal`, without creating it. */
  abort: RuntimeAbort;
  /** How deep in a `ctx.call` chain the execution is: 0 at the top, the caller's depth + 1 below. */
  depth?: number;
  /** Resolves the in-process handler function (runtimes that load code elsewhere may ignore it). */
  resolveHandler(): SkillHandler | Promise<SkillHandler>;
}

/**
 * Runs one attempt of a skill. The executor owns timeouts, retries, interceptors and the
 * audit trail; a runtime only decides *where* the handler runs. A runtime that can stop work
 * preemptively (worker threads, containers) should do so when `abort` fires (or `context.signal`).
 */
export interface SkillRuntime {
  /** Matched against `skill.runtime`. */
  readonly name: string;
  run(request: RuntimeRequest): Promise<unknown>;
  /** Releases pooled resources; called by `SkillExecutor.close()`. */
  close?(): Promise<void>;
}

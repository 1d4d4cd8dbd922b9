import type { Skill, SkillContext, SkillHandler } from "../types.js";

/** What the executor hands a runtime for one attempt. */
export interface RuntimeRequest {
  skill: Skill;
  input: unknown;
  /** The handler's context; `context.signal` aborts on timeout and cancellation. */
  context: SkillContext;
  /** How deep in a `ctx.call` chain the execution is: 0 at the top, the caller's depth + 1 below. */
  depth?: number;
  /** Resolves the in-process handler function (runtimes that load code elsewhere may ignore it). */
  resolveHandler(): SkillHandler | Promise<SkillHandler>;
}

/**
 * Runs one attempt of a skill. The executor owns timeouts, retries, interceptors and the
 * audit trail; a runtime only decides *where* the handler runs. A runtime that can stop work
 * preemptively (worker threads, containers) should do so when `context.signal` aborts.
 */
export interface SkillRuntime {
  /** Matched against `skill.runtime`. */
  readonly name: string;
  run(request: RuntimeRequest): Promise<unknown>;
  /** Releases pooled resources; called by `SkillExecutor.close()`. */
  close?(): Promise<void>;
}

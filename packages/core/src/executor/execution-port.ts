import type { ExecutionApproval, HostLifecycle, Skill, SkillLogger } from "../types.js";

/** The execution a nested `ctx.call` runs on behalf of: its caller's identity and its attempt's signal. */
export interface NestedCallParent {
  skill: Skill;
  executionId: string;
  apiKeyId: string;
  sessionId: string | null;
  /** 0 for a top-level execution. */
  depth: number;
  /** The parent attempt's signal: a nested execution stops when its parent's attempt does. */
  signal: AbortSignal;
  /** The parent's granted approval: it covers what the parent calls. */
  approval: ExecutionApproval | null;
}

/**
 * The narrow side of the executor that handlers and interceptors reach through their context:
 * nested calls, loggers and the host's lifecycle — never the executor itself.
 */
export interface ExecutionPort {
  /** Runs `reference` as a nested execution of `parent` and returns its output. */
  call<Output>(parent: NestedCallParent, reference: string, input: unknown): Promise<Output>;
  /** The logger of one execution (or attempt), with `fields` on every line. */
  logger(fields: Record<string, unknown>): SkillLogger;
  /** Where handlers register cleanup for the host's close. */
  readonly hostLifecycle: HostLifecycle;
}

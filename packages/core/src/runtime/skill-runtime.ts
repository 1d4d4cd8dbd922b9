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

/** A value of {@link RuntimeDescription.details}: facts a dashboard can print as they are. */
export type RuntimeDetail = string | number | boolean | null;

/** One pool a runtime keeps (ready worker threads, warm sandboxes of a skill version). */
export interface RuntimePoolDescription {
  /** What the pool serves (`threads`, `echo@1.0.0`). */
  name: string;
  /**
   * The skill version the pool serves, when it serves one: `SkillExecutor.describeRuntimes`
   * shows such a pool only to callers who can see that skill.
   */
  skillId?: string;
  /** Members now (threads alive, sandboxes started or starting). */
  size: number;
  /** Members ready for work. */
  idle: number;
  /** Members not ready for new work (running a task, still starting). */
  busy: number;
  /** The most it holds, when bounded. */
  max: number | null;
}

/**
 * What a runtime tells about itself (`SkillRuntime.describe`): settings and state, never secrets
 * (keys, environment values) nor host paths, since callers of the HTTP API read it.
 */
export interface RuntimeDescription {
  /** Facts such as `engine`, `engineVersion`, `image`, `network`, default limits, thread counts. */
  details: Record<string, RuntimeDetail>;
  /** Its pools; empty when it keeps none. */
  pools: RuntimePoolDescription[];
}

/** A runtime's description under its name, as `SkillExecutor.describeRuntimes` lists it. */
export interface DescribedRuntime extends RuntimeDescription {
  /** The runtime's name (`inline`, `worker`, `container`). */
  name: string;
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
  /**
   * Its settings and the state of its pools, cheaply (no process spawned, nothing awaited): read
   * on every `GET /api/sandbox`. Pools of skill versions carry their `skillId`.
   */
  describe?(): RuntimeDescription;
}

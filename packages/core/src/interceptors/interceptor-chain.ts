import picomatch from "picomatch";
import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import { isPromiseLike } from "../is-promise-like.js";
import type { Skill, SkillExecution } from "../types.js";
import type {
  BeforeHookResult,
  Interceptor,
  InterceptorContext,
  InterceptorMatch,
  InterceptorResult,
} from "./define-interceptor.js";

type HookName = "before" | "after" | "onError" | "audit";

/** Errors no `onError` hook may turn into an output. */
const UNRECOVERABLE_CODES: ReadonlySet<string> = new Set(["DENIED", "CANCELLED", "INTERCEPTOR_UNAVAILABLE"]);

/** The interceptors that apply to one skill, already in `before` order. */
export type InterceptorList = readonly Interceptor[];

/** What `runBefore` reports: how many layers were entered, and an early answer if one gave it. */
export interface BeforeOutcome {
  entered: number;
  shortCircuited: boolean;
  output?: unknown;
}

/** A `before` failure, carrying how many layers had been entered when it happened. */
export class InterceptorUnwind extends Error {
  constructor(
    readonly error: SkillboxError,
    readonly entered: number,
  ) {
    super(error.message);
  }
}

function compileMatch(match: InterceptorMatch | undefined): (skill: Skill) => boolean {
  if (match === undefined) return () => true;
  if (typeof match === "function") return match;
  // `bash` lets `*` match scoped names such as `@acme/weather`, as the policy plugin does.
  const names = match.names === undefined ? undefined : picomatch(match.names, { dot: true, bash: true });
  const tags = match.tags;
  return (skill) =>
    (names === undefined || names(skill.name)) &&
    (tags === undefined || tags.some((tag) => skill.tags.includes(tag)));
}

/** What a `before` hook's result means: an early answer, or (after rewriting the input) nothing. */
function applyBefore(
  result: BeforeHookResult,
  context: InterceptorContext,
  index: number,
): BeforeOutcome | undefined {
  if (result === undefined || result === null) return undefined;
  if ("output" in result) return { entered: index + 1, shortCircuited: true, output: result.output };
  if ("input" in result) context.input = result.input;
  return undefined;
}

function applyAfter(
  replaced: Awaited<ReturnType<NonNullable<Interceptor["after"]>>>,
  result: InterceptorResult,
): void {
  if (replaced !== undefined && replaced !== null && "output" in replaced) result.output = replaced.output;
}

/** Wraps an unexpected throw so the execution fails with a message naming the interceptor. */
function interceptorFailure(interceptor: Interceptor, hook: HookName, error: unknown): SkillboxError {
  if (isSkillboxError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new SkillboxError(
    "INTERCEPTOR_FAILED",
    `Interceptor "${interceptor.name}" failed in ${hook}(): ${reason}`,
    {
      cause: error,
      data: { interceptor: interceptor.name, hook },
    },
  );
}

/**
 * The registered interceptors and the code that runs their hooks in the documented order:
 * ascending `order` for `before`, descending for `after`, `onError` and `audit`. Ties keep
 * registration order. Which interceptors apply to a skill is computed once per skill version.
 */
export class InterceptorChain {
  /** How long an asynchronous hook may take before the execution fails with `INTERCEPTOR_FAILED`. */
  hookTimeoutMs = 10_000;

  private readonly entries = new Map<
    string,
    { interceptor: Interceptor; matches: (skill: Skill) => boolean }
  >();
  private sorted: { interceptor: Interceptor; matches: (skill: Skill) => boolean }[] = [];
  /** Per skill id, the list for its current definition (replaced when the definition changes). */
  private readonly perSkill = new Map<string, { contentHash: string; list: InterceptorList }>();

  /** Adds an interceptor, replacing one with the same name. */
  use(interceptor: Interceptor): void {
    if (typeof interceptor?.name !== "string" || interceptor.name === "") {
      throw new SkillboxError("REGISTRATION_INVALID", "An interceptor needs a non-empty `name`");
    }
    if (interceptor.order !== undefined && !Number.isFinite(interceptor.order)) {
      throw new SkillboxError(
        "REGISTRATION_INVALID",
        `Interceptor "${interceptor.name}": \`order\` must be a finite number`,
      );
    }
    this.entries.delete(interceptor.name);
    this.entries.set(interceptor.name, { interceptor, matches: compileMatch(interceptor.match) });
    this.rebuild();
  }

  /** Removes an interceptor by name. Returns false when none had that name. */
  remove(name: string): boolean {
    const removed = this.entries.delete(name);
    if (removed) this.rebuild();
    return removed;
  }

  /** Registered interceptors in `before` order. */
  list(): Interceptor[] {
    return this.sorted.map((entry) => entry.interceptor);
  }

  /** The interceptors that apply to `skill`, in `before` order. */
  forSkill(skill: Skill): InterceptorList {
    const cached = this.perSkill.get(skill.id);
    if (cached !== undefined && cached.contentHash === skill.contentHash) return cached.list;
    const list = this.sorted.filter((entry) => entry.matches(skill)).map((entry) => entry.interceptor);
    this.perSkill.set(skill.id, { contentHash: skill.contentHash, list });
    return list;
  }

  /**
   * Runs `before` hooks. Returns how many layers were entered (so the way out unwinds only
   * through those) and, when one answered instead of the handler, its output. A hook that
   * throws fails with an `InterceptorUnwind` carrying `entered`, for the same reason.
   *
   * Synchronous until a hook returns a promise: most hooks are synchronous, and every promise
   * and `await` on this path is paid by every execution.
   */
  runBefore(
    list: InterceptorList,
    context: InterceptorContext,
    start = 0,
  ): BeforeOutcome | Promise<BeforeOutcome> {
    for (let index = start; index < list.length; index++) {
      const interceptor = list[index]!;
      if (interceptor.before === undefined) continue;
      let returned: BeforeHookResult | Promise<BeforeHookResult>;
      try {
        returned = interceptor.before(context);
      } catch (error) {
        throw new InterceptorUnwind(interceptorFailure(interceptor, "before", error), index + 1);
      }
      if (isPromiseLike(returned)) {
        return this.bounded(returned, interceptor, "before").then(
          (result) => applyBefore(result, context, index) ?? this.runBefore(list, context, index + 1),
          (error: unknown) => {
            throw new InterceptorUnwind(interceptorFailure(interceptor, "before", error), index + 1);
          },
        );
      }
      const outcome = applyBefore(returned, context, index);
      if (outcome !== undefined) return outcome;
    }
    return { entered: list.length, shortCircuited: false };
  }

  /**
   * Runs `after` hooks in reverse order, threading the output through them. Synchronous until a
   * hook returns a promise, like {@link runBefore}.
   */
  runAfter(
    list: InterceptorList,
    context: InterceptorContext,
    result: InterceptorResult,
    start = list.length - 1,
  ): unknown | Promise<unknown> {
    for (let index = start; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.after === undefined) continue;
      let returned: ReturnType<NonNullable<Interceptor["after"]>>;
      try {
        returned = interceptor.after(context, result);
      } catch (error) {
        throw interceptorFailure(interceptor, "after", error);
      }
      if (isPromiseLike(returned)) {
        return this.bounded(returned, interceptor, "after").then(
          (replaced) => {
            applyAfter(replaced, result);
            return this.runAfter(list, context, result, index - 1);
          },
          (error: unknown) => {
            throw interceptorFailure(interceptor, "after", error);
          },
        );
      }
      applyAfter(returned, result);
    }
    return result.output;
  }

  /**
   * Runs `onError` hooks in reverse order. Returns `{ output }` when one recovered, else the
   * error to record (an `onError` that throws replaces the error with its own).
   */
  async runOnError(
    list: InterceptorList,
    context: InterceptorContext,
    error: SkillboxError,
  ): Promise<{ recovered: true; output: unknown } | { recovered: false; error: SkillboxError }> {
    // A refusal is final: recovering from one (or from a guard that failed to load and so
    // refuses in its place) would let the execution through the guard after all.
    const recoverable = !UNRECOVERABLE_CODES.has(error.code);
    let current = error;
    for (let index = list.length - 1; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.onError === undefined) continue;
      try {
        const returned = interceptor.onError(context, current);
        const recovery = isPromiseLike(returned)
          ? await this.bounded(returned, interceptor, "onError")
          : returned;
        if (recoverable && recovery !== undefined && recovery !== null && "output" in recovery) {
          return { recovered: true, output: recovery.output };
        }
      } catch (thrown) {
        current = interceptorFailure(interceptor, "onError", thrown);
      }
    }
    return { recovered: false, error: current };
  }

  /**
   * Applies `audit` hooks (outermost last) to the input or output about to be stored. A hook
   * that throws stores a marker in place of the value, never the raw value.
   */
  applyAudit(
    list: InterceptorList,
    context: InterceptorContext,
    field: "input" | "output",
    value: unknown,
  ): unknown {
    let current = value;
    for (let index = list.length - 1; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.audit === undefined) continue;
      try {
        const entry = interceptor.audit(
          context,
          field === "input" ? { input: current } : { output: current },
        );
        if (entry !== undefined && entry !== null && field in entry) current = entry[field];
      } catch (error) {
        current = `[audit hook of interceptor "${interceptor.name}" failed: ${(error as Error)?.message ?? error}]`;
      }
    }
    return current;
  }

  /** Fails a hook that has not settled within `hookTimeoutMs`, so a hung hook cannot hang an execution. */
  private bounded<T>(promise: PromiseLike<T>, interceptor: Interceptor, hook: HookName): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new SkillboxError(
              "INTERCEPTOR_FAILED",
              `Interceptor "${interceptor.name}" did not finish ${hook}() within ${this.hookTimeoutMs} ms`,
              { data: { interceptor: interceptor.name, hook } },
            ),
          ),
        this.hookTimeoutMs,
      );
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** Runs `onFinish` hooks (outermost last) without waiting; failures go to `report`. */
  runOnFinish(
    list: InterceptorList,
    context: InterceptorContext,
    execution: SkillExecution,
    report: (interceptor: Interceptor, error: unknown) => void,
  ): void {
    for (let index = list.length - 1; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.onFinish === undefined) continue;
      try {
        const returned = interceptor.onFinish(context, execution);
        if (isPromiseLike(returned)) returned.then(undefined, (error: unknown) => report(interceptor, error));
      } catch (error) {
        report(interceptor, error);
      }
    }
  }

  private rebuild(): void {
    this.sorted = [...this.entries.values()]
      .map((entry, index) => ({ entry, index }))
      .sort(
        (a, b) => (a.entry.interceptor.order ?? 0) - (b.entry.interceptor.order ?? 0) || a.index - b.index,
      )
      .map(({ entry }) => entry);
    this.perSkill.clear();
  }
}

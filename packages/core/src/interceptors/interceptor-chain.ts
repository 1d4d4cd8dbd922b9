import picomatch from "picomatch";
import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import type { Skill } from "../types.js";
import type {
  AuditEntry,
  BeforeHookResult,
  Interceptor,
  InterceptorContext,
  InterceptorMatch,
  InterceptorResult,
} from "./define-interceptor.js";

type HookName = "before" | "after" | "onError" | "audit";

/** The interceptors that apply to one skill, already in `before` order. */
export type InterceptorList = readonly Interceptor[];

function compileMatch(match: InterceptorMatch | undefined): (skill: Skill) => boolean {
  if (match === undefined) return () => true;
  if (typeof match === "function") return match;
  const names = match.names === undefined ? undefined : picomatch(match.names, { dot: true });
  const tags = match.tags;
  return (skill) =>
    (names === undefined || names(skill.name)) &&
    (tags === undefined || tags.some((tag) => skill.tags.includes(tag)));
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
  private readonly entries = new Map<
    string,
    { interceptor: Interceptor; matches: (skill: Skill) => boolean }
  >();
  private sorted: { interceptor: Interceptor; matches: (skill: Skill) => boolean }[] = [];
  private readonly perSkill = new Map<string, InterceptorList>();

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
    const key = `${skill.id}\u0000${skill.contentHash}`;
    let list = this.perSkill.get(key);
    if (list === undefined) {
      list = this.sorted.filter((entry) => entry.matches(skill)).map((entry) => entry.interceptor);
      this.perSkill.set(key, list);
    }
    return list;
  }

  /** Runs `before` hooks; returns the final input, or an output that short-circuits the handler. */
  async runBefore(
    list: InterceptorList,
    context: InterceptorContext,
  ): Promise<{ output?: unknown; shortCircuited: boolean }> {
    for (const interceptor of list) {
      if (interceptor.before === undefined) continue;
      let result: BeforeHookResult;
      try {
        result = await interceptor.before(context);
      } catch (error) {
        throw interceptorFailure(interceptor, "before", error);
      }
      if (result === undefined || result === null) continue;
      if ("output" in result) return { output: result.output, shortCircuited: true };
      if ("input" in result) context.input = result.input;
    }
    return { shortCircuited: false };
  }

  /** Runs `after` hooks in reverse order, threading the output through them. */
  async runAfter(
    list: InterceptorList,
    context: InterceptorContext,
    result: InterceptorResult,
  ): Promise<unknown> {
    for (let index = list.length - 1; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.after === undefined) continue;
      try {
        const replaced = await interceptor.after(context, result);
        if (replaced !== undefined && replaced !== null && "output" in replaced)
          result.output = replaced.output;
      } catch (error) {
        throw interceptorFailure(interceptor, "after", error);
      }
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
    const recoverable = error.code !== "DENIED" && error.code !== "CANCELLED";
    let current = error;
    for (let index = list.length - 1; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.onError === undefined) continue;
      try {
        const recovery = await interceptor.onError(context, current);
        if (recoverable && recovery !== undefined && recovery !== null && "output" in recovery) {
          return { recovered: true, output: recovery.output };
        }
      } catch (thrown) {
        current = interceptorFailure(interceptor, "onError", thrown);
      }
    }
    return { recovered: false, error: current };
  }

  /** Applies `audit` hooks (outermost last) to what will be stored. A failing hook stores a marker, never the raw value. */
  applyAudit(list: InterceptorList, context: InterceptorContext, entry: AuditEntry): AuditEntry {
    let current = entry;
    for (let index = list.length - 1; index >= 0; index--) {
      const interceptor = list[index]!;
      if (interceptor.audit === undefined) continue;
      try {
        current = interceptor.audit(context, current) ?? current;
      } catch (error) {
        const marker = `[audit hook of interceptor "${interceptor.name}" failed: ${(error as Error)?.message ?? error}]`;
        current = {
          ...("input" in current ? { input: marker } : {}),
          ...("output" in current ? { output: marker } : {}),
        };
      }
    }
    return current;
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

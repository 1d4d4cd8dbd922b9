import picomatch from "picomatch";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { InterceptorPhases } from "../telemetry/execution-span.js";
import type { Skill } from "../types.js";
import type { Interceptor, InterceptorContext, InterceptorMatch } from "./define-interceptor.js";
import {
  EMPTY_PASS,
  type FinishFailureReport,
  type InterceptorPass,
  LayeredPass,
} from "./interceptor-pass.js";

/** The interceptors that apply to one skill, already in `before` order. */
export type InterceptorList = readonly Interceptor[];

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

/**
 * The registered interceptors, sorted in the documented order: ascending `order` for `before`,
 * descending for `after`, `onError` and `audit`; ties keep registration order. Which interceptors
 * apply to a skill is computed once per skill version; {@link open} starts one execution's pass
 * through them (`interceptor-pass.ts` runs the hooks).
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
   * Opens the pass of one execution of `skill` through the interceptors that apply to it (see
   * `InterceptorPass` for the order of the hooks and which layers each phase visits). A skill no
   * interceptor applies to gets the shared empty pass: it costs nothing.
   */
  open(
    skill: Skill,
    context: InterceptorContext,
    reportFinishFailure: FinishFailureReport,
    spans?: InterceptorPhases,
  ): InterceptorPass {
    const layers = this.forSkill(skill);
    if (layers.length === 0) return EMPTY_PASS;
    return new LayeredPass({
      layers,
      context,
      hookTimeoutMs: this.hookTimeoutMs,
      reportFinishFailure,
      spans,
    });
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

import {
  type Interceptor,
  isSkillboxError,
  type Skill,
  type SkillHandler,
  type SkillRegistration,
} from "@skillbox/core";
import type { FailedPackage, LoadedPackage } from "./loader-types.js";
import type { InterceptorPackage, SkillPackage } from "./manifest/read-package.js";

/**
 * A skill's handler as this loader holds it: imported when the package was (on reload, or for
 * its schemas), or lazily on the first execution. One slot per loaded version: a reload gets a
 * new slot, so a handler answers only for the code it was imported from.
 */
export class HandlerSlot {
  private handler: SkillHandler | undefined;
  private loading: Promise<SkillHandler> | undefined;
  private refusal: Promise<SkillHandler> | undefined;

  constructor(handler?: SkillHandler) {
    this.handler = handler;
  }

  /** Whether the handler is in memory (imported and checked). */
  get loaded(): boolean {
    return this.handler !== undefined;
  }

  /**
   * The handler, importing it with `load` once (concurrent callers share the import; a failed
   * import is tried again). A `load` that calls `refuse` settles it for this version: every
   * call gets that error until the package changes.
   */
  get(
    load: (refuse: (error: unknown) => never) => Promise<SkillHandler>,
  ): SkillHandler | Promise<SkillHandler> {
    if (this.handler !== undefined) return this.handler;
    if (this.refusal !== undefined) return this.refusal;
    const refuse = (error: unknown): never => {
      this.refusal = Promise.reject(error);
      // Handled by whoever asks; never an unhandled rejection of its own.
      this.refusal.catch(() => {});
      throw error;
    };
    this.loading ??= load(refuse).then(
      (handler) => {
        this.handler = handler;
        this.loading = undefined;
        return handler;
      },
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }
}

/** A skill package that is registered. */
export interface RegisteredSkillState {
  kind: "skill";
  state: "registered";
  descriptor: SkillPackage;
  registration: SkillRegistration;
  skill: Skill;
  handler: HandlerSlot;
}

/** A skill package whose `requires` are not met right now: it is not registered until they are. */
export interface WaitingSkillState {
  kind: "skill";
  state: "waiting";
  descriptor: SkillPackage;
  registration: SkillRegistration;
  /** The requirements not met, as `name@range`. */
  unmet: string[];
  handler: HandlerSlot;
}

/** An interceptor plugin that loaded (in the executor unless its manifest says `enabled: false`). */
export interface ActiveInterceptorState {
  kind: "interceptor";
  state: "active";
  descriptor: InterceptorPackage;
  interceptor: Interceptor;
}

/**
 * An interceptor plugin that did not load: `interceptor` is the fail-closed stand-in (see
 * `failClosedInterceptor`) refusing what the plugin would guard, `failure` says why.
 */
export interface StandInInterceptorState {
  kind: "interceptor";
  state: "stand-in";
  descriptor: InterceptorPackage;
  interceptor: Interceptor;
  failure: FailedPackage;
}

/** What the loader knows about one package folder. */
export type PackageState =
  | RegisteredSkillState
  | WaitingSkillState
  | ActiveInterceptorState
  | StandInInterceptorState;

/** A folder read (and, when needed, imported) as a skill package. */
export interface PreparedSkill {
  kind: "skill";
  root: string;
  descriptor: SkillPackage;
  registration: SkillRegistration;
  /** Imported while preparing (on reload, or for `defineSkill` schemas); else imported lazily. */
  handler: SkillHandler | undefined;
}

/** A folder read and imported as an interceptor plugin. */
export interface PreparedInterceptor {
  kind: "interceptor";
  root: string;
  descriptor: InterceptorPackage;
  interceptor: Interceptor;
}

/** An interceptor plugin that failed to load: it is stood in for by a fail-closed interceptor. */
export interface PreparedStandIn {
  kind: "stand-in";
  root: string;
  descriptor: InterceptorPackage;
  interceptor: Interceptor;
  failure: FailedPackage;
}

/** What preparing one package folder yielded. */
export type PreparedPackage =
  | PreparedSkill
  | PreparedInterceptor
  | PreparedStandIn
  /** A package that does not read, hash or import: the last good version stays. */
  | { kind: "failed"; root: string; failure: FailedPackage }
  /** No package (no manifest, the folder is gone, or a full load did not find it): it goes. */
  | { kind: "absent"; root: string }
  /** Cannot be told now (its bundle's package.json does not parse): left as it is. */
  | { kind: "kept"; root: string };

/** A prepared package that provides something (a skill, an interceptor or its stand-in). */
export type ProvidingPackage = PreparedSkill | PreparedInterceptor | PreparedStandIn;

/** Whether `prepared` provides a skill or an interceptor. */
export function isProviding(prepared: PreparedPackage): prepared is ProvidingPackage {
  return prepared.kind === "skill" || prepared.kind === "interceptor" || prepared.kind === "stand-in";
}

/** The public description of a package. */
export function describe(state: PackageState): LoadedPackage {
  const { descriptor } = state;
  return {
    kind: descriptor.kind,
    name: descriptor.manifest.name,
    version: descriptor.manifest.version,
    root: descriptor.root,
    ...(state.kind === "skill" && state.state === "registered" ? { skillId: state.skill.id } : {}),
  };
}

/** A load failure as reported in events and reports. */
export function failure(root: string, error: unknown): FailedPackage {
  const data = isSkillboxError(error) ? (error.data as { file?: string } | undefined) : undefined;
  return {
    root,
    file: data?.file ?? root,
    code: isSkillboxError(error) ? error.code : "HANDLER_INVALID",
    message: error instanceof Error ? error.message : String(error),
  };
}

/**
 * What a package provides, keyed as the registry (skills: `name@version`) or the executor
 * (interceptors: their name) keys it: two folders must not provide the same.
 */
export function identityOf(entry: PackageState | ProvidingPackage): string {
  return entry.kind === "skill"
    ? `${entry.registration.name}@${entry.registration.version}`
    : `interceptor "${entry.interceptor.name}"`;
}

/** Runs `work` over `items` with at most `limit` in flight. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

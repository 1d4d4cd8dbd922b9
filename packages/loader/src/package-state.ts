import {
  type Interceptor,
  isSkillboxError,
  type Skill,
  type SkillHandler,
  type SkillRegistration,
} from "@skillbox/core";
import type { FailedPackage, LoadedPackage } from "./loader-types.js";
import type { PackageDescriptor } from "./manifest/read-package.js";

/** What the loader knows about one package folder. */
export interface PackageState {
  descriptor: PackageDescriptor;
  /** Skills: what was (or would be) registered. */
  registration?: SkillRegistration;
  skill?: Skill;
  handler?: SkillHandler;
  handlerLoading?: Promise<SkillHandler>;
  /** Interceptors: the instance in the executor. */
  interceptor?: Interceptor;
  /**
   * Interceptors: why the plugin did not load, while `interceptor` is the fail-closed stand-in
   * (see `failClosedInterceptor`) that refuses what the plugin would guard.
   */
  unavailable?: FailedPackage;
  /** Requirements not met right now (the skill is then unregistered). */
  unmet?: string[];
}

/** What a folder yielded after reading and (when needed) importing. */
export interface PreparedPackage {
  descriptor: PackageDescriptor;
  registration?: SkillRegistration;
  handler?: SkillHandler;
  interceptor?: Interceptor;
  /** Interceptors that failed to load: the reason (`interceptor` is then the fail-closed stand-in). */
  failure?: FailedPackage;
}

/** Whether `state` is an interceptor plugin that loaded (not a fail-closed stand-in). */
export function isWorkingInterceptor(state: PackageState | undefined): boolean {
  return state?.interceptor !== undefined && state.unavailable === undefined;
}

/** The state an interceptor package starts from: a stand-in remembers why the plugin did not load. */
export function interceptorStateOf(entry: PreparedPackage): PackageState {
  return entry.failure === undefined
    ? { descriptor: entry.descriptor }
    : { descriptor: entry.descriptor, unavailable: entry.failure };
}

/** The public description of a package. */
export function describe(state: PackageState): LoadedPackage {
  const { descriptor } = state;
  return {
    kind: descriptor.kind,
    name: descriptor.manifest.name,
    version: descriptor.manifest.version,
    root: descriptor.root,
    ...(state.skill ? { skillId: state.skill.id } : {}),
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

/** What a package provides, keyed as the registry (skills) or the executor (interceptors) keys it. */
export function identityOf(entry: { registration?: SkillRegistration; interceptor?: Interceptor }): string {
  return entry.registration !== undefined
    ? `${entry.registration.name}@${entry.registration.version}`
    : `interceptor "${entry.interceptor?.name}"`;
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

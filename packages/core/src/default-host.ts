import { createSkillHost, type SkillHost } from "./create-skill-host.js";
import { SkillExecutor, type SkillExecutorCloseOptions } from "./executor/skill-executor.js";
import { SkillRegistry } from "./registry/skill-registry.js";

let defaultHost: SkillHost | undefined;

/**
 * The process-wide host behind `skillRegistry` and `skillExecutor`, created on first use over
 * `SKILLBOX_DB` (or `./.skillbox/skillbox.db`).
 */
export function getDefaultSkillHost(): SkillHost {
  defaultHost ??= createSkillHost();
  return defaultHost;
}

/**
 * Closes the default host (if it was ever created), running its close handlers (a browser skill's
 * Chromium, for one), so a script can exit; the next use creates a fresh one.
 */
export async function closeDefaultSkillHost(options?: SkillExecutorCloseOptions): Promise<void> {
  const host = defaultHost;
  defaultHost = undefined;
  await host?.close(options);
}

/**
 * A stand-in that creates the real instance on first property access, so importing
 * `@skillbox/core` never opens a database by itself.
 */
function lazyInstance<T extends object>(prototype: object, get: () => T): T {
  return new Proxy(Object.create(prototype) as T, {
    get(_target, property) {
      const instance = get();
      const value = Reflect.get(instance, property, instance);
      return typeof value === "function" ? value.bind(instance) : value;
    },
    set(_target, property, value) {
      return Reflect.set(get(), property, value);
    },
    has(_target, property) {
      return Reflect.has(get(), property);
    },
  });
}

/** The default registry (the reference's `skillRegistry` singleton). */
export const skillRegistry: SkillRegistry = lazyInstance(
  SkillRegistry.prototype,
  () => getDefaultSkillHost().registry,
);

/** The default executor (the reference's `skillExecutor` singleton). */
export const skillExecutor: SkillExecutor = lazyInstance(
  SkillExecutor.prototype,
  () => getDefaultSkillHost().executor,
);

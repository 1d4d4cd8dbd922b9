/**
 * `@skillbox/core/internal`: the pieces of core that Skillbox's own packages (loader, sandbox,
 * server, CLI) and its benchmarks build on, and that are not part of the public API.
 *
 * Not semver-stable: any release may change or remove what is here. Applications and skill
 * packages import `@skillbox/core` (or `@skillbox/core/handler`); nothing here is for them.
 */
export { reviveError } from "./errors/revive-error.js";
export type { SerializedError } from "./errors/serialize-error.js";
export { findOverDeepPath } from "./executor/find-over-deep-path.js";
export { findJsonSchemaProblem } from "./executor/schema-validator.js";
export { isGlobalOwner } from "./registry/owner-scope.js";
export { parseSkillReference, type SkillReference } from "./registry/skill-reference.js";
export { handlerModulePath } from "./runtime/handler-module-path.js";
export { createWorkerRuntime, type WorkerRuntimeOptions } from "./runtime/worker-runtime.js";
export {
  durableSkillFields,
  formatZodIssues,
  retryPolicySchema,
  sandboxSettingsSchema,
  skillCodeSchema,
  skillExampleSchema,
} from "./schemas.js";

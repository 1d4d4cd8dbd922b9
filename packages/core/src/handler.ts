/**
 * `@skillbox/core/handler`: what a handler module imports from `@skillbox/core`, without the
 * registry, SQLite or worker threads, so it loads anywhere (container sandboxes alias
 * `@skillbox/core` to this entry). Its only dependency is zod.
 */
export {
  type ApprovalPredicate,
  type DefinedSkill,
  defineSkill,
  isDefinedSkill,
  type SchemaInput,
  type SkillCodeFields,
  type SkillDefinitionOptions,
} from "./define-skill.js";
export {
  deny,
  isSkillboxError,
  SkillboxError,
  type SkillboxErrorCode,
  type SkillboxErrorOptions,
} from "./errors/skillbox-error.js";
export { defineInterceptor } from "./interceptors/define-interceptor.js";
export {
  type AddressPolicy,
  type AddressRefusal,
  createAddressPolicy,
  isAddressEntry,
  normalizeHost,
} from "./network/address-policy.js";
export { AddressRefusedError } from "./network/address-refused-error.js";
export { type AddressClass, classifyAddress, parseIpLiteral } from "./network/classify-address.js";
export {
  createGuardedLookup,
  type GuardedLookup,
  type GuardedLookupCallback,
} from "./network/guarded-lookup.js";
export type {
  ExecutionApproval,
  HostCloseHandler,
  HostLifecycle,
  ProgressReport,
  SkillContext,
  SkillHandler,
  SkillLogger,
} from "./types.js";
export {
  type OwnerWorkspaceOptions,
  ownerWorkspace,
  ownerWorkspaceSegment,
} from "./workspace/owner-workspace.js";
export {
  type ResolveWorkspacePathOptions,
  resolveWorkspacePath,
} from "./workspace/resolve-workspace-path.js";
export { matchSensitivePathName, SENSITIVE_PATH_NAMES } from "./workspace/sensitive-path-names.js";

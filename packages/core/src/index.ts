/**
 * `@skillbox/core`: the public API (named exports only; packages/core/test/public-surface.test.ts
 * lists them). Handler modules import the light `@skillbox/core/handler`; what only Skillbox's own
 * packages share is in `@skillbox/core/internal`, which is not semver-stable.
 */
export { createSkillHost, type SkillHost, type SkillHostOptions } from "./create-skill-host.js";
export {
  DEFAULT_DATABASE_PATH,
  type OpenDatabaseOptions,
  openDatabase,
  resolveDatabasePath,
} from "./database/open-database.js";
export { closeDefaultSkillHost, getDefaultSkillHost, skillExecutor, skillRegistry } from "./default-host.js";
export {
  type ApprovalPredicate,
  type DefinedSkill,
  defineSkill,
  isDefinedSkill,
  type SchemaInput,
  type SkillCodeFields,
  type SkillDefinitionOptions,
} from "./define-skill.js";
// The shared record of executions that several processes (or hosts) dispatch and run.
export { isPostgresUrl, redactedUrl } from "./distributed/database-url.js";
export type { BackendApprove, BackendSubmit, ExecutionBackend } from "./distributed/execution-backend.js";
export type {
  ApproveRecordOptions,
  CancelRequestResult,
  ClaimOptions,
  ClaimResult,
  ClaimToken,
  DispatchTarget,
  EndUnclaimedOptions,
  ExecutionClaim,
  ExecutionRecordStore,
  FinalOutcome,
  InsertQueuedResult,
  ListWorkersOptions,
  PauseOptions,
  QueuedExecutionRecord,
  RecordNotice,
  RecoverExpiredOptions,
  RecoveredExecution,
  RenewResult,
  RequestCancelOptions,
  StaleQueuedExecution,
  StaleQueuedOptions,
  WorkerHeartbeat,
  WorkerRecord,
} from "./distributed/execution-record-store.js";
export {
  createSqliteRecordStore,
  type SqliteRecordStore,
  type SqliteRecordStoreOptions,
} from "./distributed/sqlite-record-store.js";
export {
  defineErrorCodes,
  type ErrorCatalogue,
  type ErrorCodeDefinition,
  type ErrorCodeOf,
  type ErrorCodeStatus,
} from "./errors/define-error-codes.js";
export {
  executionStatusForCode,
  isRecoverableCode,
  isRetriedByDefault,
  isSkillboxErrorCode,
  SKILLBOX_ERROR_CATALOGUE,
} from "./errors/error-catalogue.js";
export { HOST_PATH_PLACEHOLDER, scrubHostPaths } from "./errors/scrub-host-paths.js";
export {
  deny,
  isSkillboxError,
  SkillboxError,
  type SkillboxErrorCode,
  type SkillboxErrorOptions,
} from "./errors/skillbox-error.js";
export {
  type CallerError,
  type CallerErrorOptions,
  HOST_ONLY_ERROR_KEYS,
  toCallerError,
} from "./errors/to-caller-error.js";
export type { DispatchedRunOutcome, DispatchedRunRequest } from "./executor/dispatched-run.js";
export type {
  ApproveOptions,
  CancelOptions,
  EventsOptions,
  ExecutionAccess,
  RejectOptions,
  WaitOptions,
  WatchFilter,
} from "./executor/durable-options.js";
export {
  DURATION_HISTOGRAM_BOUNDS_MS,
  type DurationBucket,
  type DurationHistogram,
  type DurationHistogramOptions,
  type SkillDurations,
} from "./executor/duration-histogram-query.js";
export type { ExecutionStreamEvent } from "./executor/execution-event-hub.js";
export { executionFailure } from "./executor/execution-failure.js";
export type { CauseDescription } from "./executor/execution-outcome.js";
export type { ExecutionQueueOptions } from "./executor/execution-queue.js";
export type { SkillStats, SkillStatsOptions, SkillStatsResult } from "./executor/execution-stats.js";
export type { ExecutionFilters } from "./executor/execution-store.js";
export {
  DEFAULT_MAX_PAGE_BYTES,
  DEFAULT_PREVIEW_LENGTH,
  type ExecutionSummary,
  type ExecutionSummaryOptions,
  type JsonPreview,
  MAX_PREVIEW_LENGTH,
} from "./executor/execution-summary.js";
export {
  type ExecutionTimeline,
  type ExecutionTimelineBucket,
  type ExecutionTimelineOptions,
  MAX_TIMELINE_BUCKETS,
} from "./executor/execution-timeline-query.js";
export { DEFAULT_MAX_NESTING_DEPTH } from "./executor/find-over-deep-path.js";
export type { JobOptions } from "./executor/job-store.js";
export { DEFAULT_RETRY_POLICY } from "./executor/retry-policy.js";
export {
  type HandlerResolver,
  SkillExecutor,
  type SkillExecutorCloseOptions,
  type SkillExecutorEvents,
  type SkillExecutorOptions,
} from "./executor/skill-executor.js";
export { toCallerExecution } from "./executor/to-caller-execution.js";
export {
  type AuditEntry,
  type BeforeHookResult,
  defineInterceptor,
  type Interceptor,
  type InterceptorContext,
  type InterceptorMatch,
  type InterceptorResult,
} from "./interceptors/define-interceptor.js";
export {
  type ConsoleLoggerOptions,
  createConsoleLogger,
  type LogLevel,
} from "./logger/create-console-logger.js";
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
export { parseInterceptorOptions } from "./parse-interceptor-options.js";
export { GLOBAL_OWNERS } from "./registry/owner-scope.js";
export {
  type RegistryChange,
  type ResolveOptions,
  SkillRegistry,
  type SkillRegistryOptions,
} from "./registry/skill-registry.js";
export type {
  DescribedRuntime,
  RuntimeAbort,
  RuntimeDescription,
  RuntimeDetail,
  RuntimePoolDescription,
  RuntimeRequest,
  SkillRuntime,
} from "./runtime/skill-runtime.js";
export {
  SKILL_NAME_PATTERN,
  type SkillRegistration,
} from "./schemas.js";
export {
  createSkillboxIdGenerator,
  type SkillboxIdGenerator,
} from "./telemetry/skillbox-id-generator.js";
export type { TelemetryOptions } from "./telemetry/telemetry-options.js";
export {
  createToolNameMap,
  TOOL_NAME_PATTERN,
  type ToolNameMap,
  type ToolReference,
} from "./tool-name-map.js";
export type {
  ExecuteOptions,
  ExecutionApproval,
  ExecutionError,
  ExecutionFailureStatus,
  ExecutionProgress,
  ExecutionRecordFields,
  ExecutionStatus,
  FailedExecution,
  GlobalOwner,
  HostCloseHandler,
  HostLifecycle,
  JsonSchema,
  ProgressReport,
  RetryPolicy,
  Skill,
  SkillCode,
  SkillContext,
  SkillExample,
  SkillExecution,
  SkillHandler,
  SkillLogger,
  SkillRuntimeName,
  SkillSandboxSettings,
  SubmitOptions,
  SucceededExecution,
  UnfinishedExecution,
  UnfinishedExecutionStatus,
} from "./types.js";
export { EXECUTION_STATUSES, FINAL_EXECUTION_STATUSES, isFinalExecutionStatus } from "./types.js";
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

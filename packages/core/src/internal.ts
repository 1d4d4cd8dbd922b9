/**
 * `@skillbox/core/internal`: the pieces of core that Skillbox's own packages (loader, sandbox,
 * server, CLI) and its benchmarks build on, and that are not part of the public API.
 *
 * Not semver-stable: any release may change or remove what is here. Applications and skill
 * packages import `@skillbox/core` (or `@skillbox/core/handler`); nothing here is for them.
 */
export { readSqliteSchemaVersion, type SchemaVersion } from "./database/read-sqlite-schema-version.js";
export { MAX_LEASE_REQUEUES } from "./distributed/execution-record-store.js";
export { nestedRecordColumns } from "./distributed/nested-record-columns.js";
export { type RecordJobRow, type WorkerRow, workerOf } from "./distributed/record-rows.js";
export { reviveError } from "./errors/revive-error.js";
export type { SerializedError } from "./errors/serialize-error.js";
export { createExecutionId } from "./executor/create-execution-id.js";
export {
  checkedDecider,
  checkedText,
  isSettled,
  MAX_REASON_LENGTH,
  notPending,
} from "./executor/decision-checks.js";
export {
  BUCKET_OF_DURATION,
  type DurationHistogramRow,
  durationHistogramResult,
} from "./executor/duration-histogram-query.js";
export { ExecutionEventHub } from "./executor/execution-event-hub.js";
export { recordedError } from "./executor/execution-failure.js";
export {
  checkedInstant,
  FINAL_STATUS_LIST,
  MAX_STATS_ROWS,
  type PerNameRange,
  perNameRange,
  type SkillStatsRow,
  STATS_VERSION_KEYS,
  skillStatsResult,
} from "./executor/execution-stats.js";
export { type ExecutionRow, rowToExecution } from "./executor/execution-store.js";
export {
  type ExecutionRowCommon,
  type ExecutionSummaryRow,
  identityOf,
  resolveSummaryOptions,
  rowToSummary,
  timingOf,
} from "./executor/execution-summary.js";
export {
  type ExecutionTimelineRange,
  type ExecutionTimelineRow,
  timelineRange,
  timelineResult,
} from "./executor/execution-timeline-query.js";
export { findOverDeepPath } from "./executor/find-over-deep-path.js";
export { type ExecutionEventsSource, followExecutionEvents } from "./executor/follow-execution-events.js";
export { hashInput } from "./executor/hash-input.js";
export { checkSameRequest } from "./executor/idempotency-gate.js";
export { findJsonSchemaProblem } from "./executor/schema-validator.js";
export { type SettledWaitSource, waitUntilSettled } from "./executor/wait-until-settled.js";
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
export { AsyncContextManager } from "./telemetry/async-context-manager.js";
export { installSpanRelay, startRelayedTask } from "./telemetry/install-span-relay.js";
export { installedTracer } from "./telemetry/installed-tracer-provider.js";
export { perMeterProvider } from "./telemetry/per-meter-provider.js";
export {
  callContextAtBoundary,
  endRelayBoundary,
  isTracing,
  type RelayBoundary,
  replayAtBoundary,
  startRelayBoundary,
} from "./telemetry/relay-boundary.js";
export { RelayTracerProvider, SPAN_RELAY_KEY } from "./telemetry/relay-tracer-provider.js";
export { replayRelayedSpans } from "./telemetry/replay-relayed-spans.js";
export { withIdHint } from "./telemetry/skillbox-id-generator.js";
export {
  DEFAULT_SPAN_RELAY_LIMITS,
  type RelayedSpan,
  type RelayedSpans,
  SpanRelay,
  type SpanRelayLimits,
} from "./telemetry/span-relay.js";
export {
  formatTraceparent,
  parseTraceparent,
  TraceContextPropagator,
} from "./telemetry/trace-context-propagator.js";

export {
  createDistributedHost,
  type DistributedHost,
  type DistributedHostOptions,
  type DistributedRole,
  type DistributedWorkerOptions,
  type OpenRecordStoreOptions,
  openRecordStore,
} from "./create-distributed-host.js";
export {
  DistributedExecutions,
  type DistributedExecutionsOptions,
  type JobDispatcher,
} from "./distributed-executions.js";
export {
  buildDoctorReport,
  type DoctorReport,
  type DoctorSources,
  type DoctorStoreChecks,
  type QueueDepth,
} from "./doctor-report.js";
export { POSTGRES_SCHEMA_VERSION } from "./postgres/postgres-migrations.js";
export {
  createPostgresRecordStore,
  PostgresRecordStore,
  type PostgresRecordStoreOptions,
} from "./postgres/postgres-record-store.js";
export { assertRedisNoEviction, readMaxmemoryPolicy } from "./queue/assert-redis-no-eviction.js";
export {
  ClaimingWorker,
  type ClaimingWorkerCloseOptions,
  type ClaimingWorkerJobReport,
  type ClaimingWorkerOptions,
} from "./queue/claiming-worker.js";
export {
  connectQueueRedis,
  type QueueRedisConnectOptions,
  type QueueRedisOptions,
  type QueueRedisRole,
  queueRedisOptions,
  waitForQueueRedis,
} from "./queue/connect-queue-redis.js";
export type { ExecutionJob } from "./queue/execution-job.js";
export {
  ExecutionJobQueue,
  type ExecutionJobQueueOptions,
  type ExecutionQueueDepth,
} from "./queue/execution-job-queue.js";
export type { ExecutionRunner, RunContext, RunResult } from "./queue/execution-runner.js";
export { checkQueueName, DEFAULT_QUEUE_PREFIX } from "./queue/queue-name.js";
export {
  RecordSweeper,
  type RecordSweeperOptions,
  type SweeperJobQueue,
  type SweepReport,
} from "./queue/record-sweeper.js";
export { type RunStopKind, runStopKind, runStopReason } from "./queue/run-stop.js";
export { RecordFollower, type RecordFollowerOptions } from "./record-follower.js";
export { type RunClaimedOptions, runClaimedExecution } from "./run-claimed-execution.js";
export { skillContentHash } from "./skill-content-hash.js";
export { DEFAULT_QUEUE, skillQueueName } from "./skill-queue-name.js";

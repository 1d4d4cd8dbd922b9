import type { SandboxProviderName } from "@skillbox/sandbox";

/** The `server` block of {@link SkillboxConfig}: where `skillbox dev` and `skillbox serve` listen. */
export interface SkillboxServerConfig {
  /** TCP port (default 3000; 0 picks a free one). `--port` and `SKILLBOX_PORT` win over it. */
  port?: number;
  /** Interface to bind (default `127.0.0.1`). `--host` and `SKILLBOX_HOST` win over it. */
  host?: string;
  /**
   * API key → owner id. A request's key decides whose skills it sees; an owner written
   * `"owner+approver"` may also approve and reject that owner's executions. `SKILLBOX_API_KEYS`
   * (`"key1:owner1,key2:owner2+approver"`) wins over it, so secrets can stay out of the file.
   */
  apiKeys?: Record<string, string>;
  /** Largest request body accepted, in bytes (default: the server's). */
  maxBodyBytes?: number;
  /** Bounds on the MCP sessions of `/mcp` (see `createMcpHttpHandler` in `@skillbox/server`). */
  mcp?: SkillboxMcpSessionsConfig;
  /** Bounds on the A2A tasks of `/a2a` kept for `tasks/get` (see `BoundedTaskStore` in `@skillbox/server`). */
  a2a?: SkillboxA2aTasksConfig;
}

/**
 * The `server.a2a` block of {@link SkillboxConfig}: how many A2A tasks, and how many bytes of
 * them, `skillbox dev` and `skillbox serve` keep in memory. Each `SKILLBOX_A2A_…` variable wins over its field.
 */
export interface SkillboxA2aTasksConfig {
  /** Tasks kept (default 1000; `SKILLBOX_A2A_MAX_TASKS`). */
  maxTasks?: number;
  /** Serialised bytes all kept tasks hold together (default 64 MiB; `SKILLBOX_A2A_MAX_TASK_BYTES`). */
  maxTaskBytes?: number;
  /**
   * Serialised bytes one finished task keeps (default 1 MiB; `SKILLBOX_A2A_MAX_BYTES_PER_TASK`);
   * larger parts become a reference to `GET /api/executions/<id>`.
   */
  maxBytesPerTask?: number;
}

/**
 * The `server.mcp` block of {@link SkillboxConfig}: how many MCP sessions `skillbox dev` and
 * `skillbox serve` keep and for how long. Each `SKILLBOX_MCP_…` variable wins over its field.
 */
export interface SkillboxMcpSessionsConfig {
  /** Sessions one owner may hold (default 100; `SKILLBOX_MCP_MAX_SESSIONS_PER_OWNER`). */
  maxSessionsPerOwner?: number;
  /** Sessions in all (default 10 000; `SKILLBOX_MCP_MAX_SESSIONS`). */
  maxSessions?: number;
  /** Idle time after which a session ends (default 15 min; `SKILLBOX_MCP_SESSION_IDLE_TIMEOUT_MS`). */
  sessionIdleTimeoutMs?: number;
}

/** The `executor` block of {@link SkillboxConfig}: limits on how long executions may hold the host. */
export interface SkillboxExecutorConfig {
  /**
   * Ceiling on every attempt's timeout, a skill's own `timeoutMs` included (default: none). A
   * caller's `timeoutMs` can only lower a skill's timeout. `SKILLBOX_MAX_ATTEMPT_TIMEOUT_MS` wins over it.
   */
  maxAttemptTimeoutMs?: number;
  /**
   * How long `skillbox serve`, `dev` and `mcp` wait for running executions when asked to stop
   * before cancelling them, recorded `cancelled` (default 10 000). `SKILLBOX_SHUTDOWN_GRACE_MS` wins over it.
   */
  shutdownGraceMs?: number;
  /** How long an execution may wait for approval when neither the call nor the skill says (default 24 h). */
  approvalTimeoutMs?: number;
  /**
   * The background queue of `serve`, `dev` and `mcp` (submitted and approved executions): most at
   * once (default 16) and most of one skill at once (default: `concurrency`).
   */
  queue?: { concurrency?: number; perSkillConcurrency?: number };
}

/** The `worker` block of {@link SkillboxConfig}: each field's flag of `skillbox worker` wins over it. */
export interface SkillboxWorkerConfig {
  /** Queues taken from (default `["default"]`; a skill's manifest `queue` routes it, e.g. `sandbox`). `--queues`. */
  queues?: string[];
  /** Most executions run at once (default 16). `--concurrency`. */
  concurrency?: number;
  /** How long a claim lasts unrenewed, in ms (default 30 000, renewed every third of it). `--lease-ms`. */
  leaseMs?: number;
}

/** The `sandbox` block of {@link SkillboxConfig}: how `runtime: "container"` skills run. */
export interface SkillboxSandboxConfig {
  /** The sandbox provider (`podman`, `docker`, `bwrap`, …); default: `SKILLBOX_SANDBOX_RUNTIME`, else the first installed. */
  runtime?: SandboxProviderName;
  /** Sandboxes started ahead of time per container skill version (a skill's `sandbox.warmPool` wins). Default 0. */
  warmPoolSize?: number;
  /** Image of handler skills whose manifest names none (default `localhost/skillbox-node:latest`). */
  image?: string;
}

/**
 * The `telemetry` block of {@link SkillboxConfig}: OpenTelemetry traces and metrics of
 * `skillbox serve` and `dev`, exported over OTLP/HTTP. With the block (and `enabled` not false)
 * they start the OpenTelemetry Node SDK even when no `OTEL_*` variable is set. A field set here
 * wins over its `OTEL_*` variable (explicit configuration over the environment, as the
 * OpenTelemetry SDKs do); a field left out falls back to the variable, then to the default.
 * `OTEL_SDK_DISABLED=true` turns it all off whatever the file says.
 */
export interface SkillboxTelemetryConfig {
  /** `false` keeps the SDK off even when `OTEL_*` variables ask for export (default true). */
  enabled?: boolean;
  /**
   * The collector's base URL (default `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`);
   * traces go to `<endpoint>/v1/traces`, metrics to `<endpoint>/v1/metrics`.
   */
  endpoint?: string;
  /** Headers sent with every export, such as an API key (merged over `OTEL_EXPORTER_OTLP_HEADERS`). */
  headers?: Record<string, string>;
  /** `service.name` of the exported resource (default `OTEL_SERVICE_NAME`, else `"skillbox"`). */
  serviceName?: string;
  /** The OTLP encoding (default `OTEL_EXPORTER_OTLP_PROTOCOL`, else `"http/protobuf"`). */
  protocol?: "http/protobuf" | "http/json";
  /** Record each execution's input as `gen_ai.tool.call.arguments`, redacted by the `audit` hooks first (default false). */
  recordInputs?: boolean;
  /** Record each execution's output as `gen_ai.tool.call.result`, redacted by the `audit` hooks first (default false). */
  recordOutputs?: boolean;
  /** How often metrics are exported, in milliseconds (default `OTEL_METRIC_EXPORT_INTERVAL`, else 60 000). */
  metricsIntervalMs?: number;
}

/** What `skillbox.config.ts` (or `.mjs` / `.js`) default-exports. Relative paths are relative to the file. */
export interface SkillboxConfig {
  /** Folders whose subfolders are skill and interceptor packages (default `["./plugins"]`). Arguments on the command line win. */
  dirs?: string[];
  /** Also load installed npm packages that declare a `"skillbox"` field (default true). */
  npm?: boolean;
  /**
   * The SQLite file (default `./.skillbox/skillbox.db`), or a `postgres://` (`postgresql://`) URL:
   * the shared record of a distributed deployment, kept as written (the log shows it with the
   * password redacted). Without a `queue`, a PostgreSQL database serves reads (`executions`,
   * `wait`, `cancel`, `reject`); running needs the queue. `--db` and `SKILLBOX_DB` win over it.
   */
  database?: string;
  /**
   * The queue's Redis (`redis://[user:password@]host[:port][/db]`, `rediss://` for TLS): set, every
   * command works against a distributed deployment — executions are recorded in `database`,
   * dispatched through BullMQ and run by `skillbox worker` processes. The Redis must have
   * `maxmemory-policy noeviction`. `--queue` and `SKILLBOX_QUEUE` win over it.
   */
  queue?: string;
  /** Prefix of the queue's Redis keys, shared by every host of a deployment (default `skillbox`). `--prefix` and `SKILLBOX_QUEUE_PREFIX` win. */
  queuePrefix?: string;
  /** How `skillbox worker` and `serve --role worker|both` take executions from the queue. */
  worker?: SkillboxWorkerConfig;
  /** Owner of the loaded skills, and the caller the CLI runs skills as (default: loaded skills are global, `system`). */
  owner?: string;
  server?: SkillboxServerConfig;
  executor?: SkillboxExecutorConfig;
  sandbox?: SkillboxSandboxConfig;
  /** OpenTelemetry export of `serve` and `dev` (see docs/observability.md). */
  telemetry?: SkillboxTelemetryConfig;
  /** Serve Skillbox Studio, the web dashboard, at `/` of `serve` and `dev` (default true); `--no-studio` wins. */
  studio?: boolean;
}

/**
 * Types a `skillbox.config.ts`: `export default defineConfig({ dirs: ["./skills"] })`. It returns
 * its argument unchanged; the CLI validates the file when it loads it.
 */
export function defineConfig(config: SkillboxConfig): SkillboxConfig {
  return config;
}

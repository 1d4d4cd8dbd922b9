import { isSandboxProviderName } from "@skillbox/sandbox";
import { z } from "zod";

const port = z
  .number({ error: "must be a port number" })
  .int("must be a whole number")
  .min(0, "must be 0 (any free port) or more")
  .max(65535, "must be at most 65535");

/** The largest delay a Node timer honours (about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

const milliseconds = z
  .number({ error: "must be a number of milliseconds" })
  .int("must be a whole number of milliseconds")
  .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} milliseconds`);

/** The schema of `executor.maxAttemptTimeoutMs`, also used for `SKILLBOX_MAX_ATTEMPT_TIMEOUT_MS`. */
export const maxAttemptTimeoutSchema = milliseconds.positive("must be a positive number of milliseconds");

/** The schema of `executor.shutdownGraceMs`, also used for `SKILLBOX_SHUTDOWN_GRACE_MS`. */
export const shutdownGraceSchema = milliseconds.min(0, "must be 0 or more milliseconds");

/** The schema of `worker.leaseMs`, also used for `--lease-ms`: renewed every third of it, so not too short. */
export const leaseSchema = milliseconds.min(1000, "must be at least 1000 milliseconds");

/** The schema of `executor.queue.concurrency`, `perSkillConcurrency` and `worker.concurrency` (also `--concurrency`). */
export const executionCountSchema = z
  .number({ error: "must be a number of executions" })
  .int("must be a whole number of executions")
  .min(1, "must be at least 1 execution")
  .max(10_000, "must be at most 10000 executions");

/** The schema of `server.mcp.maxSessionsPerOwner` and `maxSessions`, also used for their environment variables. */
export const sessionCountSchema = z
  .number({ error: "must be a number of sessions" })
  .int("must be a whole number of sessions")
  .positive("must be at least 1 session");

/** The schema of `server.a2a.maxTasks`, also used for `SKILLBOX_A2A_MAX_TASKS`. */
export const taskCountSchema = z
  .number({ error: "must be a number of tasks" })
  .int("must be a whole number of tasks")
  .positive("must be at least 1 task");

/** The schema of `server.a2a.maxTaskBytes` and `maxBytesPerTask`, also used for their environment variables. */
export const taskBytesSchema = z
  .number({ error: "must be a number of bytes" })
  .int("must be a whole number of bytes")
  .positive("must be at least 1 byte");

/** The schema of `server.mcp.sessionIdleTimeoutMs`, also used for `SKILLBOX_MCP_SESSION_IDLE_TIMEOUT_MS`. */
export const sessionIdleTimeoutSchema = milliseconds.positive("must be a positive number of milliseconds");

/** The OTLP/HTTP encodings `skillbox serve` and `dev` can export with. */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;

/** The schema of `telemetry.metricsIntervalMs`, also used for `OTEL_METRIC_EXPORT_INTERVAL`. */
export const metricsIntervalSchema = milliseconds.min(
  1000,
  "must be at least 1000 milliseconds (metrics are exported every interval)",
);

/** The schema of the `telemetry` block: OpenTelemetry export of `serve` and `dev`. */
const telemetrySchema = z
  .object(
    {
      enabled: z.boolean({ error: "must be true or false" }).optional(),
      endpoint: z
        .url({
          protocol: /^https?$/,
          error: 'must be the collector\'s base URL, such as "http://127.0.0.1:4318"',
        })
        .optional(),
      headers: z
        .record(z.string().min(1), z.string({ error: "must be a header value" }), {
          error: 'must map header names to values, such as { "x-honeycomb-team": "key" }',
        })
        .optional(),
      serviceName: z.string({ error: "must be a service name" }).min(1, "must be a service name").optional(),
      protocol: z.enum(OTLP_PROTOCOLS, { error: 'must be "http/protobuf" or "http/json"' }).optional(),
      recordInputs: z.boolean({ error: "must be true or false" }).optional(),
      recordOutputs: z.boolean({ error: "must be true or false" }).optional(),
      metricsIntervalMs: metricsIntervalSchema.optional(),
    },
    { error: 'must be an object such as { endpoint: "http://127.0.0.1:4318" }' },
  )
  .strict();

/**
 * Zod schema of a config file's default export. Unknown fields are errors, so a typo such as
 * `dir` is reported instead of silently ignored.
 */
export const configSchema = z
  .object(
    {
      dirs: z
        .array(z.string().min(1, "must not be empty"), { error: "must be a list of folders" })
        .optional(),
      npm: z.boolean({ error: "must be true or false" }).optional(),
      database: z
        .string({ error: 'must be a SQLite file path or a URL such as "postgres://user@host/skillbox"' })
        .min(1, 'must be a SQLite file path or a URL such as "postgres://user@host/skillbox"')
        .optional(),
      // Checked in full (scheme, host) by `loadConfig`, which names SKILLBOX_QUEUE and the form.
      queue: z
        .string({ error: 'must be a Redis URL such as "redis://127.0.0.1:6379"' })
        .min(1, 'must be a Redis URL such as "redis://127.0.0.1:6379"')
        .optional(),
      queuePrefix: z
        .string({ error: "must be a Redis key prefix" })
        .regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, `_`, `.` or `-`, such as "skillbox"')
        .optional(),
      worker: z
        .object(
          {
            queues: z
              .array(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a queue name such as "default"'), {
                error: 'must be a list of queue names, such as ["default", "sandbox"]',
              })
              .min(1, "must name at least one queue")
              .optional(),
            concurrency: executionCountSchema.optional(),
            leaseMs: leaseSchema.optional(),
          },
          { error: 'must be an object such as { queues: ["default"], concurrency: 16 }' },
        )
        .strict()
        .optional(),
      owner: z.string({ error: "must be an owner id" }).min(1, "must be an owner id").optional(),
      server: z
        .object(
          {
            port: port.optional(),
            host: z.string({ error: "must be a host name or address" }).min(1).optional(),
            apiKeys: z
              .record(z.string().min(1), z.string().min(1, "must name an owner"), {
                error: 'must map API keys to owner ids, such as { "key-1": "acme" }',
              })
              .optional(),
            maxBodyBytes: z.number().int().positive("must be a positive number of bytes").optional(),
            mcp: z
              .object(
                {
                  maxSessionsPerOwner: sessionCountSchema.optional(),
                  maxSessions: sessionCountSchema.optional(),
                  sessionIdleTimeoutMs: sessionIdleTimeoutSchema.optional(),
                },
                { error: "must be an object" },
              )
              .strict()
              .optional(),
            a2a: z
              .object(
                {
                  maxTasks: taskCountSchema.optional(),
                  maxTaskBytes: taskBytesSchema.optional(),
                  maxBytesPerTask: taskBytesSchema.optional(),
                },
                { error: "must be an object" },
              )
              .strict()
              .optional(),
          },
          { error: "must be an object" },
        )
        .strict()
        .optional(),
      executor: z
        .object(
          {
            maxAttemptTimeoutMs: maxAttemptTimeoutSchema.optional(),
            shutdownGraceMs: shutdownGraceSchema.optional(),
            approvalTimeoutMs: milliseconds.positive("must be a positive number of milliseconds").optional(),
            queue: z
              .object(
                {
                  concurrency: executionCountSchema.optional(),
                  perSkillConcurrency: executionCountSchema.optional(),
                },
                { error: "must be an object" },
              )
              .strict()
              .optional(),
          },
          { error: "must be an object" },
        )
        .strict()
        .optional(),
      sandbox: z
        .object(
          {
            runtime: z
              .string({ error: "must be a sandbox provider name" })
              .refine(isSandboxProviderName, {
                error: (issue) =>
                  `must be a sandbox provider such as "podman", "docker" or "bwrap", got ${JSON.stringify(issue.input)}`,
              })
              .optional(),
            warmPoolSize: z
              .number()
              .int()
              .min(0, "must be 0 or more")
              .max(64, "must be at most 64")
              .optional(),
            image: z.string().min(1).optional(),
          },
          { error: "must be an object" },
        )
        .strict()
        .optional(),
      telemetry: telemetrySchema.optional(),
      studio: z.boolean({ error: "must be true or false" }).optional(),
    },
    { error: "must be an object: export default defineConfig({ ... })" },
  )
  .strict();

/** A config file's content once validated. */
export type ValidatedConfig = z.output<typeof configSchema>;

/** The schema of a port given on the command line or in `SKILLBOX_PORT`. */
export const portSchema = port;

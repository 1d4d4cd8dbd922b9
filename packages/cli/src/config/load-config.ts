import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isPostgresUrl, resolveDatabasePath, SkillboxError } from "@skillbox/core";
import { formatZodIssues } from "@skillbox/core/internal";
import { displayPath } from "@skillbox/loader/internal";
import type { SandboxProviderName } from "@skillbox/sandbox";
import { createJiti } from "jiti";
import type { ZodType } from "zod";
import {
  configSchema,
  maxAttemptTimeoutSchema,
  sessionCountSchema,
  sessionIdleTimeoutSchema,
  shutdownGraceSchema,
  taskBytesSchema,
  taskCountSchema,
  type ValidatedConfig,
} from "./config-schema.js";
import type { SkillboxTelemetryConfig } from "./define-config.js";
import { checkPostgresUrl, checkQueueUrl } from "./deployment-urls.js";

/** Config file names looked for in the working directory, in this order. */
const CONFIG_FILE_NAMES = [
  "skillbox.config.ts",
  "skillbox.config.mts",
  "skillbox.config.mjs",
  "skillbox.config.js",
];

/** How long serve, dev and mcp wait for running executions on shutdown when nothing says otherwise. */
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** The queue a worker takes from when nothing names one (`@skillbox/distributed`'s `DEFAULT_QUEUE`). */
const DEFAULT_WORKER_QUEUE = "default";

/** Executions a worker runs at once when nothing says otherwise (the distributed host's default). */
const DEFAULT_WORKER_CONCURRENCY = 16;

/** One place a setting may come from, highest precedence first. */
interface SettingSource {
  value: string | undefined;
  /** How errors name it: `--db`, `SKILLBOX_DB`, `skillbox.config.ts: \`database\``. */
  source: string;
  /** Resolves a relative SQLite path (the file's paths are relative to the file). */
  resolvePath?: (path: string) => string;
}

/** The first source that is set; with `blankIsUnset`, a blank value (an empty variable) counts as unset. */
function firstSetting(
  sources: SettingSource[],
  blankIsUnset = true,
): (SettingSource & { value: string }) | undefined {
  return sources.find(
    (candidate): candidate is SettingSource & { value: string } =>
      candidate.value !== undefined && (!blankIsUnset || candidate.value.trim() !== ""),
  );
}

/**
 * The database a command uses: a `postgres://` URL is kept verbatim (checked, never
 * path-resolved); anything else is a SQLite file resolved as before (default
 * `./.skillbox/skillbox.db`).
 */
function resolveDatabase(sources: SettingSource[]): string {
  // As before the URLs: only an unset value falls through (the SQLite behaviour is unchanged).
  const chosen = firstSetting(sources, false);
  if (chosen === undefined) return resolveDatabasePath(undefined);
  if (isPostgresUrl(chosen.value)) return checkPostgresUrl(chosen.value, chosen.source);
  return resolveDatabasePath(chosen.resolvePath?.(chosen.value) ?? chosen.value);
}

/** What the command line contributes to the config. */
export interface ConfigOverrides {
  /** `--config`: the file to load instead of looking for one. */
  configFile?: string;
  /** `--db`: the database file, or a `postgres://` URL. */
  database?: string;
  /** `--queue`: the queue's Redis URL (`redis://…`), which makes the host distributed. */
  queue?: string;
  /** `--prefix`: the Redis key prefix of the queue. */
  queuePrefix?: string;
  /** Positional folders: replace the file's `dirs`. */
  dirs?: string[];
}

/** The config a command runs with: file, environment and command line merged, paths absolute. */
export interface ResolvedConfig {
  /** The config file that was loaded, if any. */
  file: string | undefined;
  /** Absolute package folders. */
  dirs: string[];
  npm: boolean;
  /** Where `node_modules` is searched for npm skill packages. */
  projectRoot: string;
  /** Absolute database path (or `:memory:`), or a `postgres://` URL kept as given. */
  database: string;
  /** The queue's Redis URL (`redis://…`): set, the host is one of a distributed deployment. */
  queue: string | undefined;
  /** The Redis key prefix every host of the deployment shares (undefined: `skillbox`). */
  queuePrefix: string | undefined;
  /** How `skillbox worker` (and `serve --role worker|both`) takes executions from the queue. */
  worker: {
    /** The queues taken from (default `["default"]`). */
    queues: string[];
    /** Most executions run at once (default 16). */
    concurrency: number;
    /** How long a claim lasts unrenewed, in ms (undefined: the worker's default, 30 000). */
    leaseMs: number | undefined;
  };
  owner: string | undefined;
  server: {
    port: number | undefined;
    host: string | undefined;
    apiKeys: Record<string, string> | undefined;
    maxBodyBytes: number | undefined;
    /** MCP session bounds (undefined: the server's defaults). */
    mcp: {
      maxSessionsPerOwner: number | undefined;
      maxSessions: number | undefined;
      sessionIdleTimeoutMs: number | undefined;
    };
    /** A2A task store bounds (undefined: the server's defaults). */
    a2a: {
      maxTasks: number | undefined;
      maxTaskBytes: number | undefined;
      maxBytesPerTask: number | undefined;
    };
  };
  executor: {
    /** Ceiling on every attempt's timeout (undefined: none). */
    maxAttemptTimeoutMs: number | undefined;
    /** Milliseconds running executions get on shutdown before they are cancelled. */
    shutdownGraceMs: number;
    /** How long an approval may wait (undefined: the executor's default). */
    approvalTimeoutMs: number | undefined;
    /** Limits of the serving hosts' background queue (undefined: the executor's defaults). */
    queue: { concurrency?: number; perSkillConcurrency?: number } | undefined;
  };
  sandbox: { runtime: SandboxProviderName | undefined; warmPoolSize: number; image: string | undefined };
  /** The file's `telemetry` block as written (the environment is read when `serve`/`dev` start the SDK). */
  telemetry: SkillboxTelemetryConfig | undefined;
  /** Whether `serve` and `dev` serve the Studio at `/` (the file's `studio`, default true; `--no-studio` clears it). */
  studio: boolean;
}

/**
 * Loads `skillbox.config.{ts,mts,mjs,js}` from the working directory (or the `--config` file)
 * with jiti, validates it, and applies the overrides: command line, then environment
 * (`SKILLBOX_DB`), then the file, then defaults. Errors are `CONFIG_INVALID` naming the file and field.
 */
export async function loadConfig(overrides: ConfigOverrides = {}): Promise<ResolvedConfig> {
  const workingDirectory = process.cwd();
  const file = findConfigFile(workingDirectory, overrides.configFile);
  const fileConfig = file === undefined ? {} : await readConfigFile(file);
  const base = file === undefined ? workingDirectory : dirname(file);
  const fromFile = (path: string) => resolve(base, path);
  const dirs =
    overrides.dirs !== undefined && overrides.dirs.length > 0
      ? overrides.dirs.map((directory) => resolve(workingDirectory, directory))
      : (fileConfig.dirs ?? ["./plugins"]).map(fromFile);
  const fileLabel = file === undefined ? "" : `${displayPath(file)}: `;
  const database = resolveDatabase([
    { value: overrides.database, source: "--db" },
    { value: process.env.SKILLBOX_DB, source: "SKILLBOX_DB" },
    { value: fileConfig.database, source: `${fileLabel}\`database\``, resolvePath: fromFile },
  ]);
  const queueChoice = firstSetting([
    { value: overrides.queue, source: "--queue (SKILLBOX_QUEUE)" },
    { value: process.env.SKILLBOX_QUEUE, source: "SKILLBOX_QUEUE" },
    { value: fileConfig.queue, source: `${fileLabel}\`queue\` (SKILLBOX_QUEUE)` },
  ]);
  return {
    file,
    dirs,
    npm: fileConfig.npm ?? true,
    projectRoot: workingDirectory,
    database,
    queue: queueChoice === undefined ? undefined : checkQueueUrl(queueChoice.value, queueChoice.source),
    queuePrefix:
      firstSetting([
        { value: overrides.queuePrefix, source: "--prefix" },
        { value: process.env.SKILLBOX_QUEUE_PREFIX, source: "SKILLBOX_QUEUE_PREFIX" },
        { value: fileConfig.queuePrefix, source: "queuePrefix" },
      ])?.value ?? undefined,
    worker: {
      queues: fileConfig.worker?.queues ?? [DEFAULT_WORKER_QUEUE],
      concurrency: fileConfig.worker?.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
      leaseMs: fileConfig.worker?.leaseMs,
    },
    owner: fileConfig.owner,
    server: {
      port: fileConfig.server?.port,
      host: fileConfig.server?.host,
      apiKeys: fileConfig.server?.apiKeys,
      maxBodyBytes: fileConfig.server?.maxBodyBytes,
      mcp: {
        maxSessionsPerOwner:
          numberFromEnvironment("SKILLBOX_MCP_MAX_SESSIONS_PER_OWNER", sessionCountSchema) ??
          fileConfig.server?.mcp?.maxSessionsPerOwner,
        maxSessions:
          numberFromEnvironment("SKILLBOX_MCP_MAX_SESSIONS", sessionCountSchema) ??
          fileConfig.server?.mcp?.maxSessions,
        sessionIdleTimeoutMs:
          numberFromEnvironment("SKILLBOX_MCP_SESSION_IDLE_TIMEOUT_MS", sessionIdleTimeoutSchema) ??
          fileConfig.server?.mcp?.sessionIdleTimeoutMs,
      },
      a2a: {
        maxTasks:
          numberFromEnvironment("SKILLBOX_A2A_MAX_TASKS", taskCountSchema) ??
          fileConfig.server?.a2a?.maxTasks,
        maxTaskBytes:
          numberFromEnvironment("SKILLBOX_A2A_MAX_TASK_BYTES", taskBytesSchema) ??
          fileConfig.server?.a2a?.maxTaskBytes,
        maxBytesPerTask:
          numberFromEnvironment("SKILLBOX_A2A_MAX_BYTES_PER_TASK", taskBytesSchema) ??
          fileConfig.server?.a2a?.maxBytesPerTask,
      },
    },
    executor: {
      maxAttemptTimeoutMs:
        numberFromEnvironment("SKILLBOX_MAX_ATTEMPT_TIMEOUT_MS", maxAttemptTimeoutSchema) ??
        fileConfig.executor?.maxAttemptTimeoutMs,
      shutdownGraceMs:
        numberFromEnvironment("SKILLBOX_SHUTDOWN_GRACE_MS", shutdownGraceSchema) ??
        fileConfig.executor?.shutdownGraceMs ??
        DEFAULT_SHUTDOWN_GRACE_MS,
      approvalTimeoutMs: fileConfig.executor?.approvalTimeoutMs,
      queue: fileConfig.executor?.queue,
    },
    sandbox: {
      runtime: fileConfig.sandbox?.runtime as SandboxProviderName | undefined,
      warmPoolSize: fileConfig.sandbox?.warmPoolSize ?? 0,
      image: fileConfig.sandbox?.image,
    },
    telemetry: fileConfig.telemetry,
    studio: fileConfig.studio ?? true,
  };
}

/** A numeric setting from the environment (unset or blank: undefined); a bad value is CONFIG_INVALID naming it. */
function numberFromEnvironment(name: string, schema: ZodType<number>): number | undefined {
  const text = process.env[name];
  if (text === undefined || text.trim() === "") return undefined;
  const parsed = schema.safeParse(Number(text));
  if (!parsed.success) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `${name} ${parsed.error.issues[0]?.message ?? "is invalid"}, got ${JSON.stringify(text)}`,
      { data: { variable: name } },
    );
  }
  return parsed.data;
}

function findConfigFile(workingDirectory: string, explicit: string | undefined): string | undefined {
  if (explicit !== undefined) {
    const path = resolve(workingDirectory, explicit);
    if (!existsSync(path)) {
      throw new SkillboxError(
        "CONFIG_NOT_FOUND",
        `${displayPath(path)}: no such config file; check --config`,
      );
    }
    return path;
  }
  return CONFIG_FILE_NAMES.map((name) => resolve(workingDirectory, name)).find((path) => existsSync(path));
}

/** Imports a config file (TypeScript included) and validates its default export. */
async function readConfigFile(file: string): Promise<ValidatedConfig> {
  // `import { defineConfig } from "skillbox"` must work even where the CLI is installed
  // globally or run through npx, so the name points at this very package.
  const jiti = createJiti(import.meta.url, {
    moduleCache: false,
    fsCache: false,
    interopDefault: true,
    alias: { skillbox: fileURLToPath(new URL("../index.js", import.meta.url)) },
  });
  let exported: unknown;
  try {
    exported = await jiti.import(file, { default: true });
  } catch (error) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `${displayPath(file)}: failed to load: ${(error as Error).message}`,
      { cause: error, data: { file } },
    );
  }
  const parsed = configSchema.safeParse(exported);
  if (!parsed.success) {
    throw new SkillboxError("CONFIG_INVALID", formatZodIssues(parsed.error, displayPath(file)), {
      data: { file, issues: parsed.error.issues },
    });
  }
  return parsed.data;
}

/**
 * The shapes of the Skillbox HTTP API as the Studio reads them (see @skillbox/server's README).
 * Written out here rather than imported: the Studio is a client of the public API, and these
 * are that API's JSON, not the server's internal types.
 */

/** A JSON Schema as skills declare it (draft 2020-12 / draft-07 subset the form understands). */
export type JsonSchema = { [keyword: string]: unknown } | boolean;

/** Every execution status, in lifecycle order. */
export const EXECUTION_STATUSES = [
  "queued",
  "awaiting_approval",
  "pending",
  "running",
  "success",
  "error",
  "timeout",
  "cancelled",
  "denied",
  "rejected",
  "interrupted",
] as const;

export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

const FINAL = new Set<string>([
  "success",
  "error",
  "timeout",
  "cancelled",
  "denied",
  "rejected",
  "interrupted",
]);

/** Whether an execution with this status has ended (nothing changes it again). */
export function isFinalStatus(status: string): boolean {
  return FINAL.has(status);
}

/** One entry of a manifest's `examples`. */
export interface SkillExample {
  description?: string;
  input: unknown;
  output?: unknown;
}

export interface SkillOrigin {
  kind: "folder" | "npm" | "api";
  package: string | null;
}

export interface SkillLoadError {
  file: string;
  code: string;
  message: string;
  at: string;
}

export interface SkillStats {
  executions: number;
  finished: number;
  statuses: Partial<Record<ExecutionStatus, number>>;
  successRate: number | null;
  p50DurationMs: number | null;
  p95DurationMs: number | null;
  lastExecutionAt: string;
}

export interface SkillView {
  id: string;
  name: string;
  version: string;
  description: string;
  owner: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema | null;
  runtime: string;
  tags: string[];
  enabled: boolean;
  timeoutMs: number | null;
  createdAt: string;
  updatedAt: string;
  origin: SkillOrigin;
  lastLoadError: SkillLoadError | null;
  /** The manifest's examples (empty when it has none). */
  examples: SkillExample[];
  /** Listings with `stats=1` only; null when the caller never ran it in the window. */
  stats?: SkillStats | null;
  /** Latest-version listings: the other versions registered under the name. */
  versions?: string[];
}

export interface ExecutionError {
  code: string;
  message: string;
  data?: unknown;
}

export interface ExecutionProgress {
  progress: number;
  total?: number;
  message?: string;
  at: string;
}

export interface ExecutionApproval {
  reason: string;
  requestedBy: string;
  requestedAt: string;
  expiresAt: string | null;
  decision: "approved" | "rejected" | "expired" | null;
  decidedBy: string | null;
  decidedAt: string | null;
  comment: string | null;
  inputEdited: boolean;
}

interface ExecutionCommon {
  id: string;
  skillId: string;
  skillName: string;
  skillVersion: string;
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  status: ExecutionStatus;
  attempts: number;
  duration: number | null;
  progress: ExecutionProgress | null;
  approval: ExecutionApproval | null;
  traceId: string | null;
  spanId: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** A full execution record (`GET /api/executions/:id`, execute answers). */
export interface ExecutionRecord extends ExecutionCommon {
  input: unknown;
  output: unknown;
  error: ExecutionError | null;
}

/** The start of a stored JSON body, in listings. */
export interface JsonPreview {
  text: string;
  bytes: number;
  truncated: boolean;
}

/** An execution in a listing: previews instead of bodies. */
export interface ExecutionSummary extends ExecutionCommon {
  inputPreview: JsonPreview | null;
  outputPreview: JsonPreview | null;
  error: { code: string; message: string } | null;
}

export interface ExecutionPage {
  executions: ExecutionSummary[];
  total: number;
  limit: number;
  offset: number;
  nextOffset: number | null;
}

/** Filters of `GET /api/executions`. */
export interface ExecutionFilters {
  skill?: string;
  /** One status or several. */
  status?: ExecutionStatus | ExecutionStatus[];
  sessionId?: string;
  /** ISO instants: `[since, until)`. */
  since?: string;
  until?: string;
  parentExecutionId?: string;
  limit?: number;
  offset?: number;
}

/** `GET /api/caller`: who the key in use is. */
export interface CallerView {
  owner: string;
  approver: boolean;
  apiKeysConfigured: boolean;
}

export interface InterceptorView {
  name: string;
  order: number;
  /** `names` / `tags` are null when the interceptor does not filter on them. */
  match: { kind: "all" | "filter" | "predicate"; names: string[] | null; tags: string[] | null };
  hooks: string[];
  source: { kind: "package" | "code"; package: string | null };
  lastLoadError: SkillLoadError | null;
}

/** `GET /api/stats/executions`: the caller's executions per time bucket, by status. */
export interface ExecutionTimeline {
  bucketSeconds: number;
  since: string;
  until: string;
  buckets: Array<{ start: string; statuses: Partial<Record<ExecutionStatus, number>> }>;
}

/** `GET /api/stats/durations`: each skill's finished executions by duration range. */
export interface DurationHistogram {
  /** Upper bounds of the buckets in ms; the last bucket (`upToMs: null`) has no bound. */
  boundsMs: number[];
  window: { executions: number; since: string | null };
  skills: Array<{
    skillName: string;
    count: number;
    p50DurationMs: number | null;
    p95DurationMs: number | null;
    buckets: Array<{ upToMs: number | null; count: number }>;
  }>;
}

/** `GET /api/sandbox`: the runtimes the host has and the state of their pools. */
export interface SandboxView {
  runtimes: RuntimeView[];
}

export interface RuntimeView {
  /** The runtime's name as skills give it (`inline`, `worker`, `container`). */
  name: string;
  /** Facts about it (`engine`, `engineVersion`, `image`, `network`, default limits, …). */
  details: Record<string, string | number | boolean | null>;
  /** Pools of ready workers or warm sandboxes; empty when it keeps none. */
  pools: Array<{
    /** What the pool serves (`echo@1.0.0`, `threads`). */
    name: string;
    size: number;
    idle: number;
    busy: number;
    max: number | null;
  }>;
}

/** What the loader did, from `GET /api/events` (`activity` events). */
export type LoaderActivity =
  | {
      type: "loaded" | "reloaded" | "removed";
      at: string;
      owner: string;
      package: {
        kind: "skill" | "interceptor";
        name: string;
        version: string;
        root: string;
        skillId?: string;
      };
    }
  | {
      type: "load-error";
      at: string;
      owner: string;
      failure: { root: string; file: string; code: string; message: string };
    }
  | {
      type: "warning";
      at: string;
      owner: string;
      warning: { code: string; folder: string; message: string };
    };

/** One event of the Studio's live stream (see `LiveEvents`). */
export type LiveEvent =
  | { type: "status"; executionId: string; status: ExecutionStatus; at: string; execution: ExecutionRecord }
  | { type: "progress"; executionId: string; progress: ExecutionProgress }
  | { type: "finished"; executionId: string; execution: ExecutionRecord }
  | { type: "activity"; activity: LoaderActivity }
  | { type: "lagged"; dropped: number }
  /** The stream (re)connected: events may have been missed, so views list again. */
  | { type: "resync" };

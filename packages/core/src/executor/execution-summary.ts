import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionApproval, ExecutionProgress, ExecutionStatus, SkillExecution } from "../types.js";

/** Characters of each body a listing shows by default. */
export const DEFAULT_PREVIEW_LENGTH = 1024;
/** Largest `previewLength` a listing accepts. */
export const MAX_PREVIEW_LENGTH = 65_536;
/** Serialised size a page of summaries stays under by default (1 MiB). */
export const DEFAULT_MAX_PAGE_BYTES = 1024 * 1024;

/**
 * The start of a stored JSON body (an execution's input or output), as listings show it: the
 * whole body is read only by `getExecution(id)`.
 */
export interface JsonPreview {
  /** The first `previewLength` characters of the stored JSON text — not parseable when `truncated`. */
  text: string;
  /** Size of the whole stored JSON text in bytes (UTF-8). */
  bytes: number;
  /** Whether `text` is only the start of the body. */
  truncated: boolean;
}

/**
 * An execution as listings show it: the record of {@link SkillExecution} without its bodies.
 * `input` and `output` are replaced by `inputPreview` and `outputPreview`; `error` keeps its code
 * and its message (cut to the preview length, ending in "…" when cut) but not its `data`.
 */
export interface ExecutionSummary extends Omit<SkillExecution, "input" | "output" | "error"> {
  inputPreview: JsonPreview | null;
  outputPreview: JsonPreview | null;
  error: { code: string; message: string } | null;
}

/** How summaries are cut; see {@link ExecutionSummary}. */
export interface ExecutionSummaryOptions {
  /** Characters of each body and error message kept (default 1024, 0–65 536). */
  previewLength?: number;
  /**
   * Serialised (JSON, UTF-8) size the page stays under (default 1 MiB): the page ends early,
   * with fewer than `limit` summaries, once the next would cross it. The first summary is always
   * returned, so paging by the number returned always moves on.
   */
  maxBytes?: number;
}

/** The columns a full record and a summary read alike. */
export interface ExecutionRowCommon {
  id: string;
  skill_id: string;
  skill_name: string;
  skill_version: string;
  api_key_id: string;
  session_id: string | null;
  parent_execution_id: string | null;
  idempotency_key: string | null;
  status: ExecutionStatus;
  error_code: string | null;
  attempts: number;
  duration_ms: number | null;
  progress: string | null;
  approval: string | null;
  created_at: number;
  finished_at: number | null;
  trace_id: string | null;
  span_id: string | null;
}

/** One row of the summary query: the bodies cut in SQL, so a huge body is never read into JavaScript. */
export interface ExecutionSummaryRow extends ExecutionRowCommon {
  input_preview: string | null;
  input_bytes: number | null;
  output_preview: string | null;
  output_bytes: number | null;
  error_message_preview: string | null;
  error_message_bytes: number | null;
}

/**
 * The columns of the summary query; `@previewLength` is bound. `octet_length` reads only the
 * record header, `substr` only builds the short prefix: neither hands a whole body to JavaScript.
 */
export const SUMMARY_COLUMNS = `id, skill_id, skill_name, skill_version, api_key_id, session_id,
  parent_execution_id, idempotency_key,
  substr(input, 1, @previewLength) AS input_preview, octet_length(input) AS input_bytes,
  substr(output, 1, @previewLength) AS output_preview, octet_length(output) AS output_bytes,
  status, error_code,
  substr(error_message, 1, @previewLength) AS error_message_preview,
  octet_length(error_message) AS error_message_bytes,
  attempts, duration_ms, progress, approval, created_at, finished_at, trace_id, span_id`;

/** Reads and checks the options, naming a bad one. */
export function resolveSummaryOptions(options: ExecutionSummaryOptions): Required<ExecutionSummaryOptions> {
  const previewLength = options.previewLength ?? DEFAULT_PREVIEW_LENGTH;
  if (!Number.isInteger(previewLength) || previewLength < 0 || previewLength > MAX_PREVIEW_LENGTH) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `listExecutionSummaries: \`previewLength\` must be a whole number of characters from 0 to ${MAX_PREVIEW_LENGTH}, got ${options.previewLength}`,
    );
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_PAGE_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `listExecutionSummaries: \`maxBytes\` must be a whole number of bytes of at least 1, got ${options.maxBytes}`,
    );
  }
  return { previewLength, maxBytes };
}

function previewOf(text: string | null, bytes: number | null): JsonPreview | null {
  // A stored JSON `null` reads as `null` in the full record too.
  if (text === null || bytes === null || (text === "null" && bytes === 4)) return null;
  return { text, bytes, truncated: Buffer.byteLength(text) < bytes };
}

/** Maps a row of {@link SUMMARY_COLUMNS} to the summary callers get. */
export function rowToSummary(row: ExecutionSummaryRow): ExecutionSummary {
  let error: ExecutionSummary["error"] = null;
  if (row.error_code !== null) {
    const message = row.error_message_preview ?? "";
    const cut = row.error_message_bytes !== null && Buffer.byteLength(message) < row.error_message_bytes;
    error = { code: row.error_code, message: cut ? `${message}…` : message };
  }
  return {
    ...identityOf(row),
    inputPreview: previewOf(row.input_preview, row.input_bytes),
    outputPreview: previewOf(row.output_preview, row.output_bytes),
    status: row.status,
    error,
    ...timingOf(row),
  };
}

/** The fields that say which execution a row is, in the order records list them first. */
export function identityOf(row: ExecutionRowCommon) {
  return {
    id: row.id,
    skillId: row.skill_id,
    skillName: row.skill_name,
    skillVersion: row.skill_version,
    apiKeyId: row.api_key_id,
    sessionId: row.session_id,
    parentExecutionId: row.parent_execution_id,
    idempotencyKey: row.idempotency_key,
  };
}

/** Attempts, duration, progress, approval, trace and timestamps (ISO strings), in the order records list them last. */
export function timingOf(row: ExecutionRowCommon) {
  return {
    attempts: row.attempts,
    duration: row.duration_ms,
    progress: row.progress === null ? null : (JSON.parse(row.progress) as ExecutionProgress),
    approval: row.approval === null ? null : (JSON.parse(row.approval) as ExecutionApproval),
    traceId: row.trace_id,
    spanId: row.span_id,
    createdAt: new Date(row.created_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
  };
}

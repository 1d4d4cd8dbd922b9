import { z } from "zod";
import { isoDate, wholeNumber } from "./query-values.js";

/** Longest bucket of `GET /api/stats/executions`, in seconds (the executor's own limit). */
const MAX_BUCKET_SECONDS = 86_400;
/** Largest `window` of `GET /api/stats/durations` (the executor's own limit). */
const MAX_WINDOW = 10_000;

/**
 * Query of `GET /api/stats/executions`: the caller's executions created in `[since, until)`
 * (default the last hour) per `bucketSeconds` (default 60), of one `skill` when given. More than
 * 1440 buckets is refused by the executor, naming `bucketSeconds`.
 */
export const executionTimelineQuerySchema = z.strictObject({
  since: isoDate().optional(),
  until: isoDate().optional(),
  bucketSeconds: wholeNumber(1, MAX_BUCKET_SECONDS, "seconds").optional(),
  skill: z.string().min(1, "must not be empty").optional(),
});

/**
 * Query of `GET /api/stats/durations`: one `skill` (default every name the caller can see), over
 * the caller's `window` most recent executions of each name (default 1000), since `since`.
 */
export const durationHistogramQuerySchema = z.strictObject({
  skill: z.string().min(1, "must not be empty").optional(),
  since: isoDate().optional(),
  window: wholeNumber(1, MAX_WINDOW, "executions").optional(),
});

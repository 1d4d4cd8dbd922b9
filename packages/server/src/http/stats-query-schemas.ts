import { z } from "zod";

/** Longest bucket of `GET /api/stats/executions`, in seconds (the executor's own limit). */
const MAX_BUCKET_SECONDS = 86_400;
/** Largest `window` of `GET /api/stats/durations` (the executor's own limit). */
const MAX_WINDOW = 10_000;

/** A whole number from `minimum` to `maximum`, given as query text. */
function wholeNumber(minimum: number, maximum: number, unit: string) {
  const message = `must be a whole number of ${unit} from ${minimum} to ${maximum}`;
  return z
    .string()
    .regex(/^\d+$/, message)
    .transform(Number)
    .pipe(z.number().min(minimum, message).max(maximum, message));
}

/** A date parameter, such as `since`. */
function isoDate() {
  return z
    .string()
    .refine((value) => !Number.isNaN(Date.parse(value)), "must be a date such as 2025-01-31T12:00:00Z");
}

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

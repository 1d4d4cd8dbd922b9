import { z } from "zod";
import { listSkillsQuerySchema } from "./request-schemas.js";

/** Largest `statsWindow` accepted (the executor's own limit). */
const MAX_STATS_WINDOW = 10_000;

/**
 * Query of `GET /api/skills`: `versions`, and with `stats=1` each skill's recent statistics —
 * over the caller's `statsWindow` most recent executions of each name (default 1000), only those
 * since `statsSince` when given.
 */
export const listSkillsWithStatsQuerySchema = listSkillsQuerySchema.extend({
  stats: z.enum(["0", "1", "true", "false"], { error: 'must be "1" or "0"' }).optional(),
  statsWindow: z
    .string()
    .regex(/^\d+$/, `must be a whole number from 1 to ${MAX_STATS_WINDOW}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, `must be a whole number from 1 to ${MAX_STATS_WINDOW}`)
        .max(MAX_STATS_WINDOW, `must be a whole number from 1 to ${MAX_STATS_WINDOW}`),
    )
    .optional(),
  statsSince: z
    .string()
    .refine((value) => !Number.isNaN(Date.parse(value)), "must be a date such as 2025-01-31T12:00:00Z")
    .optional(),
});

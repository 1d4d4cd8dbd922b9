import { z } from "zod";
import { isoDate, wholeNumber } from "./query-values.js";
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
  statsWindow: wholeNumber(1, MAX_STATS_WINDOW).optional(),
  statsSince: isoDate().optional(),
});

import { isSkillboxError, type SkillExecutor } from "@skillbox/core";
import { type Context, Hono } from "hono";
import type { HttpEnv } from "./http-env.js";
import { requestInvalid } from "./http-error.js";
import { readQuery } from "./request-schemas.js";
import { durationHistogramQuerySchema, executionTimelineQuerySchema } from "./stats-query-schemas.js";

/** Options of {@link createStatsRoutes}. */
export interface StatsRoutesOptions {
  executor: SkillExecutor;
}

/**
 * The `/api/stats` routes, over the caller's own executions only:
 *
 * - `GET /executions` — `executor.executionTimeline`: executions per bucket of creation time, by
 *   status, every bucket of `[since, until)` present (default the last hour in 60 s buckets, at
 *   most 1440 buckets).
 * - `GET /durations` — `executor.durationHistogram`: each skill name's finished durations over
 *   its most recent `window` executions (default 1000), in fixed buckets, with p50/p95.
 *
 * Each is one bounded SQL query. A parameter the executor refuses (a range of more than 1440
 * buckets, `until` before `since`) is a 400 naming it, as a malformed one is.
 */
export function createStatsRoutes({ executor }: StatsRoutesOptions): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();

  routes.get("/executions", async (context) => {
    const query = readQuery(context, executionTimelineQuerySchema);
    const owner = context.get("owner");
    return context.json(await asRequestError(context, () => executor.executionTimeline({ ...query, owner })));
  });

  routes.get("/durations", async (context) => {
    const { skill, ...query } = readQuery(context, durationHistogramQuerySchema);
    const owner = context.get("owner");
    return context.json(
      await asRequestError(context, () =>
        executor.durationHistogram({ ...query, owner, ...(skill === undefined ? {} : { skills: [skill] }) }),
      ),
    );
  });

  return routes;
}

/**
 * Runs a statistics call whose options are the query's parameters, one for one: the executor's
 * `INPUT_INVALID` ("executionTimeline: `bucketSeconds` …") becomes the 400 a bad parameter gets,
 * naming the same field.
 */
async function asRequestError<T>(context: Context, compute: () => Promise<T>): Promise<T> {
  try {
    return await compute();
  } catch (error) {
    if (!isSkillboxError(error) || error.code !== "INPUT_INVALID") throw error;
    const message = error.message.replace(/^\w+: /, "");
    const field = /^`(\w+)`/.exec(message)?.[1];
    throw requestInvalid(`${context.req.method} ${context.req.path} query: ${message}`, {
      issues: [{ path: field === undefined ? [] : [field], message }],
    });
  }
}

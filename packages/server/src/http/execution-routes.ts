import {
  DEFAULT_MAX_PAGE_BYTES,
  type ExecutionFilters,
  SkillboxError,
  type SkillExecutor,
  toCallerExecution,
} from "@skillbox/core";
import { Hono } from "hono";
import type { HttpEnv } from "./http-env.js";
import { listExecutionsQuerySchema, readQuery } from "./request-schemas.js";

/** The summaries' share of a listing's 1 MiB: the rest is room for the envelope (`total`, …). */
const LISTING_MAX_BYTES = DEFAULT_MAX_PAGE_BYTES - 1024;

/**
 * The `/api/executions` routes: the audit trail, each caller seeing only its own executions.
 * Listings carry summaries (`ExecutionSummary`: previews of the bodies, a page under 1 MiB);
 * `GET /:id` carries the full record.
 */
export function createExecutionRoutes(executor: SkillExecutor): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();

  routes.get("/", (context) => {
    const query = readQuery(context, listExecutionsQuerySchema);
    const filters: ExecutionFilters = {
      owner: context.get("owner"),
      skill: query.skill,
      status: query.status,
      sessionId: query.sessionId,
      since: query.since,
    };
    // Summaries, not records: a page of full records of 1 MiB bodies was gigabytes of JSON built
    // in one synchronous turn. The bodies are at `/:id`.
    const executions = executor.listExecutionSummaries({
      ...filters,
      limit: query.limit,
      offset: query.offset,
      maxBytes: LISTING_MAX_BYTES,
    });
    const total = executor.countExecutions(filters);
    // A page cut short by its byte budget says where the next one starts.
    const next = query.offset + executions.length;
    const nextOffset = next < total ? next : null;
    return context.json({ executions, total, limit: query.limit, offset: query.offset, nextOffset });
  });

  routes.get("/:id", (context) => {
    const id = context.req.param("id");
    const owner = context.get("owner");
    const execution = executor.getExecution(id);
    // Another owner's execution answers exactly like a missing one: ids must not leak activity.
    if (execution === undefined || execution.apiKeyId !== owner) {
      throw new SkillboxError("EXECUTION_NOT_FOUND", `No execution "${id}" of owner "${owner}"`, {
        data: { id },
      });
    }
    // The caller's view: the record's stack (host paths) stays in the audit trail.
    return context.json(toCallerExecution(execution));
  });

  return routes;
}

import { type ExecutionFilters, SkillboxError, type SkillExecutor } from "@skillbox/core";
import { Hono } from "hono";
import type { HttpEnv } from "./http-env.js";
import { listExecutionsQuerySchema, readQuery } from "./request-schemas.js";

/** The `/api/executions` routes: the audit trail, each caller seeing only its own executions. */
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
    const executions = executor.listExecutions({ ...filters, limit: query.limit, offset: query.offset });
    const total = executor.countExecutions(filters);
    return context.json({ executions, total, limit: query.limit, offset: query.offset });
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
    return context.json(execution);
  });

  return routes;
}

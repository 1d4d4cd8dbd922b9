import {
  DEFAULT_MAX_PAGE_BYTES,
  type ExecutionFilters,
  SkillboxError,
  type SkillExecutor,
  toCallerExecution,
} from "@skillbox/core";
import { type Context, Hono } from "hono";
import { clientSignal } from "./client-signal.js";
import type { EventStreamSlots } from "./event-stream-slots.js";
import { createExecutionEventStreams, type ExecutionEventsOptions } from "./execution-event-stream.js";
import type { HttpEnv } from "./http-env.js";
import { ownExecution } from "./own-execution.js";
import { refuseOverDeepInput } from "./refuse-over-deep-input.js";
import {
  approveBodySchema,
  cancelBodySchema,
  getExecutionQuerySchema,
  listExecutionsQuerySchema,
  readJsonBody,
  readQuery,
  rejectBodySchema,
} from "./request-schemas.js";
import { waitForExecution } from "./wait-for-execution.js";

/** The summaries' share of a listing's 1 MiB: the rest is room for the envelope (`total`, …). */
const LISTING_MAX_BYTES = DEFAULT_MAX_PAGE_BYTES - 1024;

/** Options of {@link createExecutionRoutes}. */
export interface ExecutionRoutesOptions {
  executor: SkillExecutor;
  /** Whether the server has API keys: without them, approvers are the connections from this machine. */
  apiKeysConfigured: boolean;
  events?: ExecutionEventsOptions;
  /** The per-owner stream cap shared with `GET /api/events` (default: its own, from `events`). */
  streamSlots?: EventStreamSlots;
}

/**
 * The `/api/executions` routes: the audit trail, each caller seeing only its own executions.
 * Listings carry summaries (`ExecutionSummary`: previews of the bodies, a page under 1 MiB);
 * `GET /:id` carries the full record and long-polls with `?wait=`; `GET /:id/events` streams
 * its events; `POST /:id/cancel`, `/approve` and `/reject` act on it — deciding an approval
 * takes an approver caller, and who decided is always the caller, never a body field.
 */
export function createExecutionRoutes({
  executor,
  apiKeysConfigured,
  events,
  streamSlots,
}: ExecutionRoutesOptions): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();
  const streamEvents = createExecutionEventStreams(executor, events, streamSlots);

  routes.get("/", async (context) => {
    const query = readQuery(context, listExecutionsQuerySchema);
    const filters: ExecutionFilters = {
      owner: context.get("owner"),
      skill: query.skill,
      status: query.status,
      sessionId: query.sessionId,
      since: query.since,
      until: query.until,
      parentExecutionId: query.parentExecutionId,
    };
    // Summaries, not records: a page of full records of 1 MiB bodies was gigabytes of JSON built
    // in one synchronous turn. The bodies are at `/:id`.
    const [executions, total] = await Promise.all([
      executor.listExecutionSummaries({
        ...filters,
        limit: query.limit,
        offset: query.offset,
        maxBytes: LISTING_MAX_BYTES,
      }),
      executor.countExecutions(filters),
    ]);
    // A page cut short by its byte budget says where the next one starts.
    const next = query.offset + executions.length;
    const nextOffset = next < total ? next : null;
    return context.json({ executions, total, limit: query.limit, offset: query.offset, nextOffset });
  });

  routes.get("/:id", async (context) => {
    const id = context.req.param("id");
    const owner = context.get("owner");
    const { wait } = readQuery(context, getExecutionQuerySchema);
    // The wait answers at once for an execution that is final or awaits approval (nothing
    // changes until a person acts), and checks the owner as `ownExecution` does.
    const execution =
      wait !== undefined && wait > 0
        ? await waitForExecution(executor, id, { owner, seconds: wait, signal: clientSignal(context) })
        : await ownExecution(executor, id, owner);
    // The caller's view: the record's stack (host paths) stays in the audit trail.
    return context.json(toCallerExecution(execution));
  });

  routes.get("/:id/events", (context) => streamEvents(context, context.req.param("id")));

  routes.post("/:id/cancel", async (context) => {
    const body = await readJsonBody(context, cancelBodySchema, { allowEmpty: true });
    const execution = await executor.cancel(context.req.param("id"), {
      apiKeyId: context.get("owner"),
      reason: body.reason,
    });
    return context.json(toCallerExecution(execution));
  });

  routes.post("/:id/approve", async (context) => {
    refuseNonApprover(context, "approve", apiKeysConfigured);
    const body = await readJsonBody(context, approveBodySchema, { allowEmpty: true });
    const editsInput = Object.hasOwn(body, "input");
    if (editsInput) refuseOverDeepInput(body.input, executor.maxNestingDepth);
    const owner = context.get("owner");
    const execution = await executor.approve(context.req.param("id"), {
      apiKeyId: owner,
      by: owner,
      comment: body.comment,
      ...(editsInput ? { input: body.input } : {}),
    });
    return context.json(toCallerExecution(execution));
  });

  routes.post("/:id/reject", async (context) => {
    refuseNonApprover(context, "reject", apiKeysConfigured);
    const body = await readJsonBody(context, rejectBodySchema, { allowEmpty: true });
    const owner = context.get("owner");
    const execution = await executor.reject(context.req.param("id"), {
      apiKeyId: owner,
      by: owner,
      reason: body.reason,
    });
    return context.json(toCallerExecution(execution));
  });

  return routes;
}

/**
 * Refuses (403) a caller that may not decide approvals — before looking the execution up, so a
 * refusal says nothing about which ids exist.
 */
function refuseNonApprover(
  context: Context<HttpEnv>,
  action: "approve" | "reject",
  apiKeysConfigured: boolean,
): void {
  if (context.get("approver")) return;
  const owner = context.get("owner");
  throw new SkillboxError(
    "FORBIDDEN",
    !apiKeysConfigured
      ? `Only a connection from this machine may ${action} executions on a server without API keys; ` +
          'run the client here, or configure an approver key (SKILLBOX_API_KEYS="key:owner+approver")'
      : `This API key of owner "${owner}" may not ${action} executions; use one of its approver keys ` +
          `(configured as "key:${owner}+approver" in SKILLBOX_API_KEYS)`,
    { data: { owner, role: "approver" } },
  );
}

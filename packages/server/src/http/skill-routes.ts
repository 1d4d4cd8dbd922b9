import {
  executionFailure,
  isFinalExecutionStatus,
  SKILL_NAME_PATTERN,
  type Skill,
  SkillboxError,
  type SkillExecution,
  type SkillExecutor,
  type SkillRegistry,
  toCallerExecution,
} from "@skillbox/core";
import { type Context, Hono } from "hono";
import { clientSignal } from "./client-signal.js";
import type { HttpEnv } from "./http-env.js";
import { errorResponse, requestInvalid } from "./http-error.js";
import { listSkillsWithStatsQuerySchema } from "./list-skills-query.js";
import { ownExecution } from "./own-execution.js";
import type { PackageLoadErrors } from "./package-load-error-log.js";
import { parsePreferHeader } from "./parse-prefer-header.js";
import { refuseOverDeepInput } from "./refuse-over-deep-input.js";
import {
  executeBodySchema,
  MAX_WAIT_SECONDS,
  patchSkillBodySchema,
  readJsonBody,
  readQuery,
} from "./request-schemas.js";
import { type LatestSkillView, type SkillView, type SkillViewOptions, toSkillView } from "./skill-view.js";
import { waitForExecution } from "./wait-for-execution.js";

const SKILL_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Versions are stored normalised (no build metadata), so a `-` after the patch means a prerelease. */
const PRERELEASE = /^\d+\.\d+\.\d+-/;
/** What follows `/api/skills/` for a scoped name sent unencoded: `@acme/weather[/execute]`. */
const SCOPED_PATH = /^(@[^/]+)\/([^/]+)(\/execute)?$/;

interface SkillRoutesOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /** Where the last load error of each package is known (skill views show it). */
  loadErrors?: PackageLoadErrors;
}

/** One entry of `SkillExecutor.skillStats` (core's `SkillStats`). */
type SkillStats = Awaited<ReturnType<SkillExecutor["skillStats"]>>["skills"][number];

/** A skill's recent statistics in a listing with `?stats=1` (`SkillStats` without what the view says already). */
type SkillStatsView = Omit<SkillStats, "skillId" | "skillName" | "skillVersion">;

/**
 * The `/api/skills` routes. `POST /:name/execute` runs the skill and answers with its record;
 * with `Prefer: respond-async` it queues it (`executor.submit`) and answers 202 with `Location:
 * /api/executions/:id` (a final answer instead when `wait=N` was also preferred and it came in
 * time). An execution that awaits approval is 202 with `Location` either way.
 *
 * `GET /` with `stats=1` adds each skill's recent statistics (`stats`, null when the caller ran
 * it not once in the window) over the caller's own executions only, and the window used
 * (`statsWindow`); see `SkillExecutor.skillStats`.
 */
export function createSkillRoutes({ registry, executor, loadErrors }: SkillRoutesOptions): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();
  const viewOptions: SkillViewOptions = { loadErrors };
  const view = (skill: Skill) => toSkillView(skill, viewOptions);

  routes.get("/", async (context) => {
    const query = readQuery(context, listSkillsWithStatsQuerySchema);
    const owner = context.get("owner");
    const skills = registry.list(owner);
    const views: SkillView[] = query.versions === "all" ? skills.map(view) : latest(skills, viewOptions);
    if (query.stats !== "1" && query.stats !== "true") return context.json({ skills: views });
    const { window, skills: stats } = await executor.skillStats({
      owner,
      skills: [...new Set(skills.map((skill) => skill.name))],
      window: query.statsWindow,
      since: query.statsSince,
    });
    const byId = new Map<string, SkillStatsView>(
      stats.map(({ skillId, skillName, skillVersion, ...rest }) => [skillId, rest]),
    );
    return context.json({
      skills: views.map((entry) => ({ ...entry, stats: byId.get(entry.id) ?? null })),
      statsWindow: window,
    });
  });

  const showVersions = (context: Context<HttpEnv>, name: string) => {
    const skills = registry.getSkillVersions(checkedName(name), context.get("owner"));
    if (skills.length === 0) throw notVisible(name, context.get("owner"));
    return context.json({ name, skills: skills.map(view) });
  };
  routes.get("/:name", (context) => showVersions(context, context.req.param("name")));

  const execute = async (context: Context<HttpEnv>, name: string) => {
    // Read before the body: a preference the server cannot parse must not run anything.
    const preferences = parsePreferHeader(context.req.header("prefer"));
    const body = await readJsonBody(context, executeBodySchema);
    refuseOverDeepInput(body.input, executor.maxNestingDepth);
    const owner = context.get("owner");
    const reference = body.version === undefined ? checkedName(name) : `${checkedName(name)}@${body.version}`;
    const input = body.input === undefined ? {} : body.input;
    if (preferences.respondAsync) {
      const id = await executor.submit(reference, input, {
        apiKeyId: owner,
        idempotencyKey: body.idempotencyKey,
        timeoutMs: body.timeoutMs,
        sessionId: body.sessionId,
      });
      // `respond-async, wait=N` (RFC 7240): a final answer is welcome if it comes within N
      // seconds. The client leaving ends only the wait; the execution is queued for good.
      const seconds = Math.min(preferences.waitSeconds ?? 0, MAX_WAIT_SECONDS);
      const execution =
        seconds > 0
          ? await waitForExecution(executor, id, { owner, seconds, signal: clientSignal(context) })
          : await ownExecution(executor, id, owner);
      if (isFinalExecutionStatus(execution.status)) return answerFinal(context, execution);
      return accepted(context, execution, { "Preference-Applied": "respond-async" });
    }
    const execution = await executor.execute(reference, input, {
      apiKeyId: owner,
      idempotencyKey: body.idempotencyKey,
      timeoutMs: body.timeoutMs,
      sessionId: body.sessionId,
      // A client that goes away cancels its execution — unless it sent an idempotency key: it
      // means to retry, and the retry should get the finished execution, not a cancelled one.
      signal: body.idempotencyKey === undefined ? clientSignal(context) : undefined,
      // Its retry, though, stops waiting for the first attempt's execution once its own client left.
      waitSignal: body.idempotencyKey === undefined ? undefined : clientSignal(context),
    });
    // A skill that needs approval stops there and comes back at once: like an asynchronous
    // answer, it is not finished, so it says where to follow it.
    if (execution.status === "awaiting_approval") return accepted(context, execution);
    return answerFinal(context, execution);
  };
  routes.post("/:name/execute", (context) => execute(context, context.req.param("name")));

  // A scoped name sent unencoded spans two segments. One catch-all route, reached only when no
  // route above matched, takes it: `:scope/:name` routes beside `/:name/execute` would make
  // Hono fall back from its RegExpRouter to the trie router, microseconds slower per request.
  routes.on(["GET", "POST"], "/*", (context) => {
    const base = context.req.routePath.slice(0, -"*".length);
    const match = SCOPED_PATH.exec(context.req.path.slice(base.length));
    if (match === null || (context.req.method === "POST") !== (match[3] !== undefined)) {
      return context.notFound();
    }
    const name = `${decodeSegment(match[1]!)}/${decodeSegment(match[2]!)}`;
    return context.req.method === "POST" ? execute(context, name) : showVersions(context, name);
  });

  routes.patch("/:id", async (context) => {
    const skill = ownedSkill(registry, context, "enable or disable");
    const { enabled } = await readJsonBody(context, patchSkillBodySchema);
    const updated = registry.setEnabledById(skill.id, enabled);
    if (updated === null) throw notVisible(skill.id, context.get("owner"));
    return context.json(view(updated));
  });

  routes.delete("/:id", (context) => {
    const skill = ownedSkill(registry, context, "delete");
    registry.unregisterById(skill.id);
    return context.body(null, 204);
  });

  return routes;
}

/** 202 with the record and `Location` of an execution under way. */
function accepted(
  context: Context,
  execution: SkillExecution,
  headers: Record<string, string> = {},
): Response {
  return context.json(toCallerExecution(execution), 202, {
    Location: `/api/executions/${encodeURIComponent(execution.id)}`,
    ...headers,
  });
}

/** A finished execution: 200 with its record, or the 422 of input its schema refused. */
function answerFinal(context: Context, execution: SkillExecution): Response {
  // Invalid input is the request's fault even though the executor recorded it.
  const failure = executionFailure(execution);
  if (failure?.code === "INPUT_INVALID") {
    return errorResponse(context, {
      code: failure.code,
      message: failure.message,
      data: { executionId: execution.id, violations: failure.data },
    });
  }
  // The caller's view: the record's stack (host paths) stays in the audit trail.
  return context.json(toCallerExecution(execution));
}

/** One entry per name: the version `execute(name)` would run, else (all disabled or prerelease) the highest. */
function latest(skills: Skill[], options: SkillViewOptions): LatestSkillView[] {
  const byName = new Map<string, Skill[]>();
  for (const skill of skills) {
    const versions = byName.get(skill.name);
    if (versions === undefined) byName.set(skill.name, [skill]);
    else versions.push(skill);
  }
  return [...byName.values()].map((versions) => {
    const runnable = versions.find((skill) => skill.enabled && !PRERELEASE.test(skill.version));
    const shown = runnable ?? versions[0]!;
    return { ...toSkillView(shown, options), versions: versions.map((skill) => skill.version) };
  });
}

/** A path segment percent-decoded; one that does not decode stays as it is (and names no skill). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A name from the path; `name@range` is refused because the range belongs in the body. */
function checkedName(name: string): string {
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw new SkillboxError(
      "SKILL_NOT_FOUND",
      name.lastIndexOf("@") > 0
        ? `"${name}" is not a skill name: the path takes the name alone; execute takes a version range ` +
            'as "version" in the body'
        : `"${name}" is not a skill name (names look like "echo" or "@acme/weather")`,
      { data: { name } },
    );
  }
  return name;
}

function notVisible(nameOrId: string, owner: string): SkillboxError {
  return new SkillboxError("SKILL_NOT_FOUND", `No skill "${nameOrId}" is visible to owner "${owner}"`, {
    data: { name: nameOrId },
  });
}

/**
 * The skill named by `:id` if the caller owns it. A skill the caller cannot see is 404 (its
 * existence is not the caller's business); a visible global skill owned by someone else is 403.
 */
function ownedSkill(registry: SkillRegistry, context: Context<HttpEnv>, action: string): Skill {
  const id = context.req.param("id") ?? "";
  const owner = context.get("owner");
  if (!SKILL_ID_PATTERN.test(id)) {
    throw requestInvalid(
      `${context.req.method} /api/skills/:id takes a skill id (the "id" field of GET /api/skills), got "${id}"`,
    );
  }
  const skill = registry.getSkill(id, owner);
  if (skill === undefined) throw notVisible(id, owner);
  if (skill.apiKeyId !== owner) {
    throw new SkillboxError(
      "FORBIDDEN",
      `${skill.name}@${skill.version} belongs to owner "${skill.apiKeyId}"; only its owner may ${action} it ` +
        `(this caller is "${owner}")`,
      { data: { skillId: skill.id, owner: skill.apiKeyId } },
    );
  }
  return skill;
}

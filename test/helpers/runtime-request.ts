import { EventEmitter } from "node:events";
import { context as otelContext, propagation } from "@opentelemetry/api";
import type { ExecutionApproval, ProgressReport, RuntimeRequest, Skill, SkillContext } from "@skillbox/core";

// What the executor hands a runtime for one attempt, built without an executor: for tests of the
// worker and container runtimes, which run it in a thread or a sandbox and talk back through it.

/** A runtime request built by hand, with what its context was told. */
export interface HandBuiltRequest {
  request: RuntimeRequest;
  /** Every report handed to `request.context.progress`, in order. */
  reports: unknown[];
  /** The messages of the context logger's `warn` lines. */
  warnings: string[];
  /** The messages of its `info` lines (a sandbox's plain stderr). */
  infos: string[];
  /** Aborts the attempt, as the executor's timeout does. */
  abort(reason?: unknown): void;
}

let executions = 0;

/** A skill record as the registry would hold it, `fields` over plain defaults (runtime `inline`). */
export function testSkill(name: string, fields: Partial<Skill> = {}): Skill {
  const now = new Date().toISOString();
  return {
    id: `${name}-id`,
    name,
    version: "1.0.0",
    description: "",
    apiKeyId: "public",
    schema: { input: {} },
    handler: "unused",
    runtime: "inline",
    tags: [],
    enabled: true,
    source: "test",
    contentHash: `hash-of-${name}`,
    createdAt: now,
    updatedAt: now,
    ...fields,
  } as Skill;
}

/**
 * What the executor hands a runtime for one attempt, without an executor: the context records
 * each progress report, and `approval` is what the test grants.
 */
export function handBuiltRequest(
  skill: Skill,
  input: unknown,
  options: { approval?: ExecutionApproval | null; executionId?: string; attempt?: number } = {},
): HandBuiltRequest {
  const reports: unknown[] = [];
  const warnings: string[] = [];
  const infos: string[] = [];
  const emitter = new EventEmitter();
  const controller = new AbortController();
  const abort = Object.assign(emitter, { aborted: false, reason: undefined as unknown });
  const context = {
    signal: controller.signal,
    executionId: options.executionId ?? `execution-${++executions}`,
    attempt: options.attempt ?? 1,
    apiKeyId: "public",
    sessionId: null,
    skill,
    logger: {
      debug() {},
      info: (message: string) => infos.push(message),
      warn: (message: string) => warnings.push(message),
      error() {},
    },
    call: () => Promise.reject(new Error("no calls in this test")),
    progress(report: ProgressReport) {
      reports.push(report);
    },
    approval: options.approval ?? null,
    // As the executor's: the headers of the span active at the call.
    traceHeaders() {
      const carrier: Record<string, string> = {};
      propagation.inject(otelContext.active(), carrier);
      return carrier;
    },
  } as SkillContext;
  const request: RuntimeRequest = {
    skill,
    input,
    context,
    abort: abort as unknown as RuntimeRequest["abort"],
    resolveHandler: () => {
      throw new Error("this runtime loads its handler itself");
    },
  };
  return {
    request,
    reports,
    warnings,
    infos,
    abort(reason = new Error("aborted by the test")) {
      abort.aborted = true;
      abort.reason = reason;
      controller.abort(reason);
      emitter.emit("abort");
    },
  };
}

/** A granted approval, as `ctx.approval` shows it on a resumed run. */
export const GRANTED: ExecutionApproval = {
  reason: "it deletes files",
  requestedBy: "skill",
  requestedAt: "2026-12-01T10:00:00.000Z",
  expiresAt: null,
  decision: "approved",
  decidedBy: "alice",
  decidedAt: "2026-12-01T10:05:00.000Z",
  comment: "fine",
  inputEdited: false,
};

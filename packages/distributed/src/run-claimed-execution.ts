import {
  type ExecutionClaim,
  type JobOptions,
  type Skill,
  SkillboxError,
  type SkillExecutor,
} from "@skillbox/core";
import type { RunResult } from "./queue/execution-runner.js";
import { skillContentHash } from "./skill-content-hash.js";

/** What {@link runClaimedExecution} needs besides the claim. */
export interface RunClaimedOptions {
  executor: SkillExecutor;
  /** This worker's id, for the error messages. */
  workerId: string;
  signal: AbortSignal;
  reportProgress(progressJson: string): void;
}

/**
 * Runs a claimed execution on this worker through the normal executor (`runDispatched`):
 * interceptors, schema checks, timeouts, retries, worker threads, containers. The skill is this
 * worker's own copy of `name@version` as the caller sees it; when the worker has none, or its
 * copy's content hash differs from the one the job was submitted with, the execution ends
 * `SKILL_NOT_FOUND` / `SKILL_VERSION_MISMATCH` without running any code.
 */
export async function runClaimedExecution(
  claim: ExecutionClaim,
  options: RunClaimedOptions,
): Promise<RunResult> {
  const skill = resolveWorkerSkill(options.executor, claim);
  if (skill === undefined) {
    return refused(
      claim,
      new SkillboxError(
        "SKILL_NOT_FOUND",
        `Worker ${options.workerId} has no skill ${claim.skillName}@${claim.skillVersion} that ${claim.apiKeyId} can run; deploy the same skill folders on every worker`,
      ),
    );
  }
  const hash = skillContentHash(skill);
  if (hash !== claim.contentHash) {
    return refused(
      claim,
      new SkillboxError(
        "SKILL_VERSION_MISMATCH",
        `Worker ${options.workerId} has other code for ${claim.skillName}@${claim.skillVersion} (content hash ${hash.slice(0, 12)}, the job was submitted for ${claim.contentHash.slice(0, 12)}); deploy the same skill folders on every host, or bump the version when the code changes`,
        { data: { workerHash: hash, jobHash: claim.contentHash } },
      ),
    );
  }
  const outcome = await options.executor.runDispatched({
    executionId: claim.executionId,
    skill,
    input: claim.rawInputJson === null ? undefined : JSON.parse(claim.rawInputJson),
    apiKeyId: claim.apiKeyId,
    sessionId: claim.sessionId,
    parentExecutionId: claim.parentExecutionId,
    idempotencyKey: claim.idempotencyKey,
    options: JSON.parse(claim.optionsJson) as JobOptions,
    attemptsSoFar: claim.attempts,
    approval: claim.approval,
    createdAt: claim.createdAt,
    signal: options.signal,
    onProgress: (progress) => options.reportProgress(JSON.stringify(progress)),
  });
  if (outcome.kind === "paused") return outcome;
  return {
    kind: "final",
    outcome: {
      status: outcome.status,
      outputJson: outcome.outputJson,
      error:
        outcome.error === null
          ? null
          : {
              code: outcome.error.code,
              message: outcome.error.message,
              dataJson: outcome.error.data === undefined ? null : JSON.stringify(outcome.error.data),
            },
      attempts: outcome.attempts,
      durationMs: outcome.durationMs,
      traceId: outcome.traceId,
      spanId: outcome.spanId,
    },
  };
}

/** The worker's own copy of the claimed `name@version`, as the caller would see it here. */
function resolveWorkerSkill(executor: SkillExecutor, claim: ExecutionClaim): Skill | undefined {
  try {
    return executor.registry.resolveVersion(claim.skillName, claim.skillVersion, claim.apiKeyId) ?? undefined;
  } catch {
    // A version string this worker cannot parse cannot be its copy.
    return undefined;
  }
}

/** A run refused before any code ran: the execution ends with `error`'s code, message and data. */
function refused(claim: ExecutionClaim, error: SkillboxError): RunResult {
  return {
    kind: "final",
    outcome: {
      status: "error",
      outputJson: null,
      error: {
        code: error.code,
        message: error.message,
        dataJson: error.data === undefined ? null : JSON.stringify(error.data),
      },
      attempts: claim.attempts,
      durationMs: 0,
      traceId: null,
      spanId: null,
    },
  };
}

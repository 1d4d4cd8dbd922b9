import { SkillboxError } from "../errors/skillbox-error.js";
import { isFinalExecutionStatus, type SkillExecution } from "../types.js";

/** The columns of `skill_executions` a nested execution's row is written with (see `recordNested`). */
interface NestedRecordColumns {
  id: string;
  skillId: string;
  skillName: string;
  skillVersion: string;
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  inputJson: string | null;
  outputJson: string | null;
  status: SkillExecution["status"];
  errorCode: string | null;
  errorMessage: string | null;
  errorData: string | null;
  attempts: number;
  durationMs: number | null;
  progressJson: string | null;
  approvalJson: string | null;
  traceId: string | null;
  spanId: string | null;
  createdAt: number;
  finishedAt: number | null;
  contentHash: string;
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * The row both dialects of `ExecutionRecordStore.recordNested` insert for `execution`, read back
 * by `rowToExecution` as the same record. `INPUT_INVALID` when it has not ended: only a final
 * row may be handed over, nothing would ever finish it in the shared record.
 */
export function nestedRecordColumns(execution: SkillExecution, contentHash: string): NestedRecordColumns {
  if (!isFinalExecutionStatus(execution.status)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `recordNested: execution ${execution.id} is ${execution.status}; only an execution that ended can be recorded`,
    );
  }
  const { error } = execution;
  const createdAt = Date.parse(execution.createdAt);
  const finishedAt = execution.finishedAt === null ? null : Date.parse(execution.finishedAt);
  if (Number.isNaN(createdAt) || (finishedAt !== null && Number.isNaN(finishedAt))) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `recordNested: execution ${execution.id} has a timestamp that is not an ISO date`,
    );
  }
  return {
    id: execution.id,
    skillId: execution.skillId,
    skillName: execution.skillName,
    skillVersion: execution.skillVersion,
    apiKeyId: execution.apiKeyId,
    sessionId: execution.sessionId,
    parentExecutionId: execution.parentExecutionId,
    idempotencyKey: execution.idempotencyKey,
    inputJson: json(execution.input),
    outputJson: json(execution.output),
    status: execution.status,
    errorCode: error?.code ?? null,
    errorMessage: error?.message ?? null,
    errorData: error === null || error.data === undefined ? null : JSON.stringify(error.data),
    attempts: execution.attempts,
    durationMs: execution.duration,
    progressJson: json(execution.progress),
    approvalJson: json(execution.approval),
    traceId: execution.traceId,
    spanId: execution.spanId,
    createdAt,
    finishedAt,
    contentHash,
  };
}

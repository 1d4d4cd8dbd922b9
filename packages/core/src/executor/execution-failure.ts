import { SkillboxError } from "../errors/skillbox-error.js";
import {
  type ExecutionError,
  type ExecutionStatus,
  isFinalExecutionStatus,
  type SkillExecution,
} from "../types.js";

/**
 * The code a failed status stands for when a row carries none: only a writer other than
 * Skillbox leaves one so (the executor records every failure's error, recovery `INTERRUPTED`).
 */
const CODE_BY_STATUS = {
  error: "HANDLER_ERROR",
  timeout: "TIMEOUT",
  cancelled: "CANCELLED",
  denied: "DENIED",
  rejected: "APPROVAL_REJECTED",
  interrupted: "INTERRUPTED",
} as const;

/**
 * The error a record with a failed status carries: `error` itself, or — for a row written
 * without one — an error with the code its status stands for (`error` → `HANDLER_ERROR`,
 * `timeout` → `TIMEOUT`, `cancelled` → `CANCELLED`, `denied` → `DENIED`, `interrupted` →
 * `INTERRUPTED`, `rejected` → `APPROVAL_REJECTED`) naming `subject` (`name@version`). `null` for
 * `success` and for every status under way.
 * Where rows are read back, so every failed `SkillExecution` says why with a code.
 */
export function recordedError(
  status: ExecutionStatus,
  error: ExecutionError | null,
  subject: string,
): ExecutionError | null {
  if (status === "success" || !isFinalExecutionStatus(status)) return null;
  return (
    error ?? {
      code: CODE_BY_STATUS[status as keyof typeof CODE_BY_STATUS],
      message: `${subject} ended ${status}`,
    }
  );
}

/**
 * What went wrong in an execution, as the one `SkillboxError` every front answers with: the
 * record's error (code, message and data as recorded) for any status but `success`, undefined
 * for `success` and for a record that has not ended. The HTTP, MCP, A2A, LLM and CLI fronts all
 * use it instead of rebuilding the error from the status. The error is the record's, in full:
 * a front that answers a remote caller passes it through `toCallerError`.
 */
export function executionFailure(execution: SkillExecution): SkillboxError | undefined {
  const error = recordedError(
    execution.status,
    execution.error,
    `${execution.skillName}@${execution.skillVersion}`,
  );
  if (error === null) return undefined;
  return new SkillboxError(error.code, error.message, error.data === undefined ? {} : { data: error.data });
}

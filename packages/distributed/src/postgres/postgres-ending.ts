import type { ExecutionApproval, ExecutionStatus } from "@skillbox/core";
import type { ExecutionRow, RecordJobRow } from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import { appendStatus } from "./postgres-events.js";
import type { Queryable } from "./postgres-session.js";

/** The job of `id` and its row lock, held until the transaction ends (`undefined`: none, or not in `states`). */
export function lockJob(
  transaction: Queryable,
  id: string,
  options: { states?: readonly string[]; owner?: string } = {},
): Promise<RecordJobRow | undefined> {
  // Every writer locks the job row before the audit row: one order, so two never deadlock.
  return transaction.one<RecordJobRow>(
    `SELECT * FROM skill_execution_jobs
     WHERE execution_id = $1 AND ($2::text[] IS NULL OR state = ANY($2::text[])) AND ($3::text IS NULL OR api_key_id = $3)
     FOR UPDATE`,
    [id, options.states ?? null, options.owner ?? null],
  );
}

/** The job of a current claim, locked; undefined when `fence` is not the current claim of a running job. */
export function lockClaim(
  transaction: Queryable,
  claim: { executionId: string; fence: number },
): Promise<RecordJobRow | undefined> {
  return transaction.one<RecordJobRow>(
    "SELECT * FROM skill_execution_jobs WHERE execution_id = $1 AND fence = $2 AND state = 'running' FOR UPDATE",
    [claim.executionId, claim.fence],
  );
}

/** Drops what an execution ran with once it ended: the job (its raw input) and any cancel request. */
export async function dropJob(transaction: Queryable, id: string): Promise<void> {
  await transaction.run("DELETE FROM skill_execution_jobs WHERE execution_id = $1", [id]);
  await transaction.run("DELETE FROM skill_execution_cancels WHERE execution_id = $1", [id]);
}

/**
 * Ends an execution nobody runs (inside the caller's transaction, the job locked): the final
 * status and error on the audit row (finished now, duration 0 as SQLite's `end` writes it), the
 * job and cancel request dropped, the status event told. Undefined when the row was not in `from`.
 */
export async function endExecution(
  transaction: Queryable,
  job: Pick<RecordJobRow, "execution_id" | "api_key_id" | "skill_name">,
  end: {
    from: readonly ExecutionStatus[];
    status: ExecutionStatus;
    code: string;
    message: string;
    approval?: ExecutionApproval | undefined;
  },
): Promise<ExecutionRow | undefined> {
  const ended = await transaction.one<ExecutionRow>(
    `UPDATE skill_executions SET status = $2, error_code = $3, error_message = $4, error_data = NULL,
       approval = COALESCE($5, approval), finished_at = ${DATABASE_NOW}, duration_ms = COALESCE(duration_ms, 0)
     WHERE id = $1 AND status = ANY($6::text[]) RETURNING *`,
    [
      job.execution_id,
      end.status,
      end.code,
      end.message,
      end.approval === undefined ? null : JSON.stringify(end.approval),
      end.from,
    ],
  );
  if (ended === undefined) return undefined;
  await dropJob(transaction, job.execution_id);
  await appendStatus(
    transaction,
    { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name },
    end.status,
  );
  return ended;
}

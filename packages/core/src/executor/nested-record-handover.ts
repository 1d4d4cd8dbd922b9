import type { ExecutionBackend } from "../distributed/execution-backend.js";
import type { Skill, SkillExecution, SkillLogger } from "../types.js";
import type { ExecutionStore } from "./execution-store.js";

/** What {@link handOverNestedRecord} moves a record between. */
export interface NestedRecordHandover {
  store: ExecutionStore;
  backend: ExecutionBackend;
  logger: SkillLogger;
}

/**
 * Moves a nested execution that ended on a distributed worker from the worker's own audit trail
 * to the shared record: the committed local row (input and output as audited, not as the run
 * holds them) goes to the backend, then the local row and its events are deleted. A worker's
 * local store would otherwise keep every nested call for ever, where no other host reads it.
 * A failed write is logged and the local row kept: nothing is lost, and the parent's call is
 * not failed for it. Never rejects.
 */
export async function handOverNestedRecord(
  { store, backend, logger }: NestedRecordHandover,
  id: string,
  skill: Skill,
): Promise<void> {
  let committed: SkillExecution | undefined;
  try {
    committed = store.get(id);
    if (committed === undefined) return;
    await backend.recordNested(committed, skill);
  } catch (error) {
    logger.error(
      "could not hand a nested execution over to the shared record; its row stays in this host's store",
      {
        executionId: id,
        error: String(error),
      },
    );
    return;
  }
  try {
    store.delete(id);
  } catch (error) {
    logger.warn("could not delete a nested execution's local row after handing it over", {
      executionId: id,
      error: String(error),
    });
  }
}

import { isSkillboxError, type SkillExecution, type SkillExecutor } from "@skillbox/core";

/** Options of {@link waitForExecution}. */
export interface WaitForExecutionOptions {
  /** The caller: another owner's execution is `EXECUTION_NOT_FOUND`. */
  owner: string;
  /** How long to wait at most. */
  seconds: number;
  /** The client going away ends the wait (`WAIT_ABORTED` is thrown; nobody reads the answer). */
  signal: AbortSignal;
}

/**
 * The record once the execution is final or awaits approval — a person has to act, so there is
 * nothing more to wait for — or, after `seconds`, as it is then: a long-poll answers with the
 * current state rather than an error when its time is up.
 */
export async function waitForExecution(
  executor: SkillExecutor,
  id: string,
  options: WaitForExecutionOptions,
): Promise<SkillExecution> {
  try {
    return await executor.wait(id, {
      apiKeyId: options.owner,
      signal: options.signal,
      timeoutMs: options.seconds * 1000,
      returnOnApproval: true,
    });
  } catch (error) {
    if (isSkillboxError(error) && error.code === "WAIT_TIMEOUT") {
      const current = (error.data as { execution?: SkillExecution } | undefined)?.execution;
      if (current !== undefined) return current;
    }
    throw error;
  }
}

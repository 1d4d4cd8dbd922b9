import { SkillboxError, type SkillExecution, type SkillExecutor } from "@skillbox/core";

/**
 * The caller's own execution, else `EXECUTION_NOT_FOUND`. Another owner's execution answers
 * exactly like a missing one: ids must not leak activity.
 */
export async function ownExecution(
  executor: SkillExecutor,
  id: string,
  owner: string,
): Promise<SkillExecution> {
  const execution = await executor.getExecution(id);
  if (execution === undefined || execution.apiKeyId !== owner) {
    throw new SkillboxError("EXECUTION_NOT_FOUND", `No execution "${id}" of owner "${owner}"`, {
      data: { id },
    });
  }
  return execution;
}

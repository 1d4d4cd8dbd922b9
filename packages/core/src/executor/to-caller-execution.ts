import { toCallerError } from "../errors/to-caller-error.js";
import type { SkillExecution } from "../types.js";

/**
 * The caller's view of an execution record: the record with its error passed through
 * {@link toCallerError} (naming the skill in the fixed message of a host configuration error), so
 * host-only details (stacks, the host's paths, load failures) stay in the audit trail. Fronts answer execution records through it (HTTP execute and `GET /api/executions/:id`,
 * MCP, A2A); `execute()` and `getExecution()` in-process keep the full record. Returns a copy.
 */
export function toCallerExecution<Output>(execution: SkillExecution<Output>): SkillExecution<Output> {
  return execution.error === null
    ? { ...execution }
    : {
        ...execution,
        error: toCallerError(execution.error, { skill: `${execution.skillName}@${execution.skillVersion}` }),
      };
}

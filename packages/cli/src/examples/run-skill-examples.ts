import { isDeepStrictEqual } from "node:util";
import {
  executionFailure,
  isFinalExecutionStatus,
  type Skill,
  type SkillExample,
  type SkillExecution,
  type SkillExecutor,
} from "@skillbox/core";
import { errorCodeOf } from "../terminal/format-error-line.js";

/** The outcome of one example. */
export interface ExampleResult {
  skill: string;
  version: string;
  /** 1-based position in `examples`. */
  index: number;
  description: string | undefined;
  passed: boolean;
  /** `equal` when compared with the expected output, `schema` when only the output schema was checked. */
  check: "equal" | "schema";
  /** The recorded execution; empty when nothing ran (the skill could not be resolved). */
  executionId: string;
  /** The execution's status, or `not-run`. */
  status: string;
  /** Why it failed. */
  failure?: { code: string; message: string; expected?: unknown; actual?: unknown };
  duration: number | null;
}

/** The examples of a skill's manifest (none for skills registered without any). */
export function examplesOf(skill: Skill): SkillExample[] {
  return skill.examples ?? [];
}

/** What a caller would receive: JSON, so `undefined` fields and the like do not count. */
function asJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/**
 * Runs each example of `skill` through the executor — interceptors, schema checks, audit trail
 * and all. An example with `output` passes when the output is deep-equal to it; one without
 * passes when the execution succeeds, which means the output matched the output schema (the
 * executor checks it). An example whose execution awaits approval fails (`EXAMPLE_NEEDS_APPROVAL`)
 * and its execution is rejected.
 */
export async function runSkillExamples(
  executor: SkillExecutor,
  skill: Skill,
  caller: string | undefined,
): Promise<ExampleResult[]> {
  const results: ExampleResult[] = [];
  const examples = examplesOf(skill);
  for (const [position, example] of examples.entries()) {
    const check = example.output === undefined ? "schema" : "equal";
    let execution: SkillExecution;
    try {
      execution = await executor.execute(`${skill.name}@${skill.version}`, example.input, {
        apiKeyId: caller,
        sessionId: "skillbox-test",
      });
    } catch (error) {
      // Nothing ran (a disabled skill, say): the example fails, the others still run.
      results.push({
        skill: skill.name,
        version: skill.version,
        index: position + 1,
        description: example.description,
        check,
        passed: false,
        executionId: "",
        status: "not-run",
        failure: {
          code: errorCodeOf(error),
          message: error instanceof Error ? error.message : String(error),
        },
        duration: null,
      });
      continue;
    }
    const base = {
      skill: skill.name,
      version: skill.version,
      index: position + 1,
      description: example.description,
      check,
      executionId: execution.id,
      status: execution.status,
      duration: execution.duration,
    } as const;
    if (!isFinalExecutionStatus(execution.status)) {
      // `test` gives no approvals: the example fails, and its execution is rejected rather than
      // left waiting for a person nobody asked.
      await executor
        .reject(execution.id, { by: "skillbox test", reason: "skillbox test does not approve executions" })
        .catch(() => undefined);
      results.push({
        ...base,
        passed: false,
        failure: {
          code: "EXAMPLE_NEEDS_APPROVAL",
          message: `${skill.name}@${skill.version} needs approval, which skillbox test does not give; run the example with \`skillbox run\` and \`skillbox approve\``,
        },
      });
      continue;
    }
    const error = executionFailure(execution);
    if (error !== undefined) {
      results.push({ ...base, passed: false, failure: { code: error.code, message: error.message } });
      continue;
    }
    const actual = asJson(execution.output);
    if (check === "equal" && !isDeepStrictEqual(actual, example.output)) {
      results.push({
        ...base,
        passed: false,
        failure: {
          code: "OUTPUT_MISMATCH",
          message: "the output differs from the example's",
          expected: example.output,
          actual,
        },
      });
      continue;
    }
    results.push({ ...base, passed: true });
  }
  return results;
}

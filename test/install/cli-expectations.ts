import { expect } from "vitest";
import { describeResult, type ProcessResult } from "./child-processes.js";

/** Fails with the whole command output unless `result` exited 0. */
export function expectSuccess(result: ProcessResult): void {
  expect(result.code, describeResult(result)).toBe(0);
}

/** The JSON a command printed on stdout (`run` prints the output, nothing else). */
export function printedJson(result: ProcessResult): unknown {
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`stdout is not one JSON document\n${describeResult(result)}`);
  }
}

import {
  defineErrorCodes,
  EXECUTION_STATUSES,
  executionStatusForCode,
  isRecoverableCode,
  isRetriedByDefault,
  isSkillboxErrorCode,
  SKILLBOX_ERROR_CATALOGUE,
  SkillboxError,
  type SkillboxErrorCode,
} from "@skillbox/core";
import { describe, expect, expectTypeOf, it } from "vitest";

/** The codes `SkillboxError` never retried by default before the catalogue existed (its `NEVER_RETRIED` set). */
const NEVER_RETRIED_BEFORE = [
  "INPUT_INVALID",
  "OUTPUT_INVALID",
  "REGISTRATION_INVALID",
  "MANIFEST_INVALID",
  "HANDLER_INVALID",
  "REQUIREMENTS_UNMET",
  "CANCELLED",
  "DENIED",
  "SKILL_NOT_FOUND",
  "SKILL_REFERENCE_INVALID",
  "SKILL_DISABLED",
  "HANDLER_NOT_FOUND",
  "RUNTIME_NOT_FOUND",
  "INTERCEPTOR_FAILED",
  "INTERCEPTOR_UNAVAILABLE",
  "CALL_DEPTH_EXCEEDED",
  "UNDECLARED_DEPENDENCY",
  "IDEMPOTENCY_CONFLICT",
  "WORKER_EXITED",
  "SANDBOX_UNAVAILABLE",
  "SANDBOX_CONFIG_INVALID",
  "URL_REFUSED",
  "REQUEST_REFUSED",
  "PATH_REFUSED",
  "FILE_NOT_FOUND",
  "SIZE_LIMIT_EXCEEDED",
  "BROWSER_UNAVAILABLE",
  "ELEMENT_NOT_FOUND",
  "LANGUAGE_UNAVAILABLE",
  "CONFIG_INVALID",
];

/** The codes durable executions brought, none of them retried: each is a decision or a state, not a fault. */
const DURABLE_EXECUTION_CODES = [
  "EXECUTION_NOT_FOUND",
  "EXECUTION_FINISHED",
  "APPROVAL_REQUIRED",
  "APPROVAL_NOT_PENDING",
  "APPROVAL_REJECTED",
  "APPROVAL_EXPIRED",
  "WAIT_TIMEOUT",
  "WAIT_ABORTED",
];

/** The codes of executions across hosts (issue 19) that are never retried: the same run would meet them again. */
const DISTRIBUTED_CODES = ["DEADLINE_EXCEEDED", "SKILL_VERSION_MISMATCH"];

const CODES = Object.keys(SKILLBOX_ERROR_CATALOGUE);

describe("SKILLBOX_ERROR_CATALOGUE", () => {
  it("documents every code in one line, written UPPER_SNAKE_CASE", () => {
    expect(CODES.length).toBeGreaterThan(30);
    for (const [code, definition] of Object.entries(SKILLBOX_ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(definition.description, code).toMatch(/^\S.*\.$/);
      expect(definition.description, code).not.toContain("\n");
    }
  });

  it("never retries by default exactly the codes SkillboxError never retried before", () => {
    expect(CODES.filter((code) => !isRetriedByDefault(code)).sort()).toEqual(
      [...NEVER_RETRIED_BEFORE, ...DURABLE_EXECUTION_CODES, ...DISTRIBUTED_CODES].sort(),
    );
    expect(new SkillboxError("INPUT_INVALID", "x").retryable).toBe(false);
    expect(new SkillboxError("HANDLER_ERROR", "x").retryable).toBe(true);
    expect(new SkillboxError("INPUT_INVALID", "x", { retryable: true }).retryable).toBe(true);
  });

  it("retries a handler's own codes by default, even one named like an Object.prototype member", () => {
    expect(new SkillboxError("MY_OWN_CODE", "x").retryable).toBe(true);
    expect(new SkillboxError("constructor", "x").retryable).toBe(true);
    expect(isSkillboxErrorCode("constructor")).toBe(false);
    expect(isSkillboxErrorCode("TIMEOUT")).toBe(true);
  });

  it("gives the status an execution ends with: timeout, cancelled, denied, rejected, else error", () => {
    const statuses = Object.fromEntries(
      CODES.map((code) => [code, executionStatusForCode(code)]).filter(([, status]) => status !== "error"),
    );
    expect(statuses).toEqual({
      TIMEOUT: "timeout",
      CANCELLED: "cancelled",
      DENIED: "denied",
      INTERCEPTOR_UNAVAILABLE: "denied",
      APPROVAL_REJECTED: "rejected",
      APPROVAL_EXPIRED: "rejected",
      DEADLINE_EXCEEDED: "timeout",
    });
    expect(executionStatusForCode("MY_OWN_CODE")).toBe("error");
    expect(executionStatusForCode("toString")).toBe("error");
    for (const status of Object.values(statuses)) expect(EXECUTION_STATUSES).toContain(status);
  });

  it("marks refusals and cancellations final: no onError hook may recover from them", () => {
    // The three the interceptor pass refused to recover from before the catalogue said so, and
    // the approval outcomes: recovering from a rejection would let the execution through.
    expect(CODES.filter((code) => !isRecoverableCode(code))).toEqual([
      "CANCELLED",
      "DENIED",
      "INTERCEPTOR_UNAVAILABLE",
      "APPROVAL_REQUIRED",
      "APPROVAL_REJECTED",
      "APPROVAL_EXPIRED",
    ]);
    expect(isRecoverableCode("MY_OWN_CODE")).toBe(true);
    expect(isRecoverableCode("constructor")).toBe(true);
  });

  it("derives the code union from the table", () => {
    expectTypeOf<"TIMEOUT">().toExtend<SkillboxErrorCode>();
    expectTypeOf<"INTERRUPTED">().toExtend<SkillboxErrorCode>();
    expectTypeOf<"NOT_A_CODE">().not.toExtend<SkillboxErrorCode>();
    expectTypeOf<string>().not.toExtend<SkillboxErrorCode>();
  });
});

describe("defineErrorCodes", () => {
  it("returns the table frozen, its keys as the code union", () => {
    const table = defineErrorCodes({
      ONE_CODE: { description: "The first." },
      OTHER_CODE: { description: "The second.", retryable: false },
    });
    expect(Object.isFrozen(table)).toBe(true);
    expect(Object.keys(table)).toEqual(["ONE_CODE", "OTHER_CODE"]);
    expectTypeOf<keyof typeof table>().toEqualTypeOf<"ONE_CODE" | "OTHER_CODE">();
  });
});

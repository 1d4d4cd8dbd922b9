import { SkillboxError } from "@skillbox/core";

/**
 * Why a worker stopped a run before it returned:
 * - `lease-lost`: the claim is no longer current (another claim took over, or the lease ran out
 *   unrenewed): the run's outcome is not written;
 * - `cancelled`: someone asked to cancel; the run ends `cancelled` and that is committed;
 * - `deadline`: the execution's deadline (database clock) passed; its `timeout` is committed;
 * - `shutdown`: the worker is closing past its grace period: nothing is written, and the
 *   record's lease expiry recovers the execution.
 */
export type RunStopKind = "lease-lost" | "cancelled" | "deadline" | "shutdown";

const CODE_BY_KIND: Readonly<Record<RunStopKind, string>> = {
  "lease-lost": "INTERRUPTED",
  cancelled: "CANCELLED",
  deadline: "TIMEOUT",
  shutdown: "INTERRUPTED",
};

/**
 * The reason a run's signal is aborted with: a `SkillboxError` whose code is what the execution
 * ends with when the run reports it (`CANCELLED`, `TIMEOUT`, `INTERRUPTED`), and `data.stop` the
 * {@link RunStopKind}.
 */
export function runStopReason(kind: RunStopKind, message: string): SkillboxError {
  return new SkillboxError(CODE_BY_KIND[kind], message, { data: { stop: kind } });
}

/** The {@link RunStopKind} of an aborted run's signal, or undefined (not aborted, or not by a worker). */
export function runStopKind(signal: AbortSignal): RunStopKind | undefined {
  if (!signal.aborted) return undefined;
  const data = (signal.reason as { data?: { stop?: unknown } } | undefined)?.data;
  const stop = data?.stop;
  return typeof stop === "string" && stop in CODE_BY_KIND ? (stop as RunStopKind) : undefined;
}

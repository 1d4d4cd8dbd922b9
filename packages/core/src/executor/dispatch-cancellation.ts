import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import { CallerCancellation } from "./caller-cancellation.js";

/** Codes of a `signal.reason` that end a dispatched run `timeout` rather than `cancelled`. */
const DEADLINE_CODES: ReadonlySet<string> = new Set(["TIMEOUT", "DEADLINE_EXCEEDED"]);

/**
 * The signal of a dispatched run (see `SkillExecutor.runDispatched`) as an
 * `AttemptCancellation`: the attempt under way — or the wait before the next one — stops at
 * once (a worker thread is terminated, a container killed), and `signal.reason` decides the error:
 *
 * - a `SkillboxError` with code `TIMEOUT` or `DEADLINE_EXCEEDED` (the execution's deadline
 *   passed): `TIMEOUT`, status `timeout`, with the reason's message;
 * - anything else (a cancel from another host, a lost lease, a worker shutting down, no reason):
 *   `CANCELLED`, status `cancelled`, naming the reason.
 *
 * Neither is retried. It watches the signal as {@link CallerCancellation} does.
 */
export class DispatchCancellation extends CallerCancellation {
  override error(label: string): SkillboxError {
    const { reason } = this.signal;
    const said = describeReason(reason);
    if (isSkillboxError(reason) && DEADLINE_CODES.has(reason.code)) {
      return new SkillboxError("TIMEOUT", `${label} ran past its deadline: ${said}`, {
        retryable: false,
        data: { reason: reason.code },
      });
    }
    return new SkillboxError("CANCELLED", `${label} was cancelled: ${said}`, {
      retryable: false,
      data: { reason: said },
    });
  }
}

/** A reason as a line of text: an error's message, a string as it is. */
function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  if (typeof reason === "string" && reason !== "") return reason;
  return reason === undefined ? "its signal was aborted" : String(reason);
}

// `ctx.progress()` for handlers that run away from the host (worker threads, sandboxes): what a
// report may carry across the boundary, and how many may cross. A handler that reports in a tight
// loop must not fill the host's message queue or its stderr pipe with millions of reports, and a
// report must never throw for the handler. Plain JavaScript, so it runs unbuilt in both places.

/** Reports that go out at once before the rate limit applies. */
const PROGRESS_BURST = 32;
/** Past the burst, one report per this many ms goes out; the latest of the others waits its turn. */
const PROGRESS_INTERVAL_MS = 50;
/** A report's `message` is cut here before it crosses (the host keeps no more: it cuts at 500). */
const PROGRESS_MESSAGE_CHARACTERS = 500;

/**
 * A plain copy of a handler's report: `progress`, `total` and `message`, each a primitive (an
 * object becomes its string, so the host's check names it), the message cut. The host's
 * `ctx.progress` validates the values and drops a bad report with a log line; this only makes
 * sure what crosses is small and can be cloned, whatever the handler passed.
 */
function progressReportOf(report) {
  const copy = {};
  try {
    // Not an object: the host's check refuses it, and names what it got.
    if (report === null || typeof report !== "object") return primitiveOf(report);
    copy.progress = primitiveOf(report.progress);
    const { total, message } = report;
    if (total !== undefined) copy.total = primitiveOf(total);
    if (message !== undefined) {
      copy.message = primitiveOf(message, PROGRESS_MESSAGE_CHARACTERS);
    }
  } catch (error) {
    // A getter of the report threw: the host drops a report whose progress is not a number.
    return { progress: `unreadable report (${error?.message ?? String(error)})`.slice(0, 200) };
  }
  return copy;
}

/** `value` if a number, boolean, null or undefined; a string cut at `characters`; else its string. */
function primitiveOf(value, characters = 100) {
  if (value === null || value === undefined) return value;
  const type = typeof value;
  if (type === "number" || type === "boolean") return value;
  if (type === "string") return value.slice(0, characters);
  if (type === "bigint") return Number(value);
  return String(value).slice(0, 200);
}

/**
 * Sends one task's reports through `send`, in order: the first {@link PROGRESS_BURST} at once, then
 * one per {@link PROGRESS_INTERVAL_MS}, the latest report replacing one still waiting (a progress
 * bar wants the latest value, not every value of a flood). `close()` sends the one waiting, so the
 * last report is never lost, and ignores any after it.
 */
export class ProgressThrottle {
  #send;
  #tokens = PROGRESS_BURST;
  #refilledAt = 0;
  #waiting;
  #timer;
  #closed = false;
  /** Reports sent so far (the host waits for this many before it settles the task). */
  sent = 0;

  constructor(send) {
    this.#send = send;
  }

  /** Takes one report of the handler; never throws. */
  report(report) {
    if (this.#closed) return;
    const copy = progressReportOf(report);
    if (this.#waiting !== undefined) {
      this.#waiting = copy;
      return;
    }
    this.#refill();
    if (this.#tokens >= 1) {
      this.#tokens--;
      this.#deliver(copy);
      return;
    }
    this.#waiting = copy;
    this.#timer = setTimeout(() => this.#release(), Math.ceil((1 - this.#tokens) * PROGRESS_INTERVAL_MS));
    this.#timer.unref?.();
  }

  /** Sends the report still waiting, if any; later reports are ignored. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined) this.#deliver(waiting);
  }

  #release() {
    this.#timer = undefined;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting === undefined || this.#closed) return;
    this.#refill();
    this.#tokens = Math.max(0, this.#tokens - 1);
    this.#deliver(waiting);
  }

  #refill() {
    const now = performance.now();
    if (this.#refilledAt !== 0) {
      this.#tokens = Math.min(PROGRESS_BURST, this.#tokens + (now - this.#refilledAt) / PROGRESS_INTERVAL_MS);
    }
    this.#refilledAt = now;
  }

  #deliver(report) {
    this.sent++;
    try {
      this.#send(report);
    } catch {
      // The way out is gone (the thread's channel, a closed pipe): the host no longer listens.
    }
  }
}

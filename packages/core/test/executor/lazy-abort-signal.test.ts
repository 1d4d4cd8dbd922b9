import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { ExecutionTimeouts } from "../../src/executor/execution-timeouts.js";
import { HostShutdown } from "../../src/executor/host-shutdown.js";
import { LazyAbortSignal } from "../../src/executor/lazy-abort-signal.js";
import { RunCancellation } from "../../src/executor/run-cancellation.js";
import { runWithRetries } from "../../src/executor/run-with-retries.js";
import { skillRecord } from "./executor-test-bed.js";

/** A skill as the registry would hand it over; only what the attempt runner reads matters. */
const SKILL = skillRecord({ name: "slow" });

describe("LazyAbortSignal as an emitter (what runtimes and tinypool listen on)", () => {
  it("tells each `once` listener once, in order, with `aborted` and `reason` set by then", () => {
    const abort = new LazyAbortSignal();
    const reason = new Error("stop");
    const heard: string[] = [];
    abort.once("abort", () => heard.push(`first ${abort.aborted} ${abort.reason === reason}`));
    abort.once("abort", () => heard.push(`second ${abort.aborted}`));
    expect(abort.aborted).toBe(false);
    expect(abort.reason).toBeUndefined();
    abort.abort(reason);
    abort.abort(new Error("again"));
    expect(heard).toEqual(["first true true", "second true"]);
    expect(abort.reason).toBe(reason);
    // The signal created after the abort is aborted already, with the same reason.
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(reason);
  });

  it("tells no listener that `off` removed, whether it was added first or later", () => {
    const abort = new LazyAbortSignal();
    const heard: string[] = [];
    const first = () => heard.push("first");
    const second = () => heard.push("second");
    const third = () => heard.push("third");
    abort.once("abort", first);
    abort.once("abort", second);
    abort.once("abort", third);
    abort.off("abort", first);
    abort.off("abort", third);
    abort.abort("why");
    expect(heard).toEqual(["second"]);
  });

  it("aborts a signal read before the abort as well as telling the listeners", () => {
    const abort = new LazyAbortSignal();
    const signal = abort.signal;
    const heard: string[] = [];
    signal.addEventListener("abort", () => heard.push("signal"));
    abort.once("abort", () => heard.push("emitter"));
    abort.abort("why");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("why");
    expect(heard).toEqual(["signal", "emitter"]);
  });

  it("tells a listener added after the abort nothing: `aborted` is what says so", () => {
    const abort = new LazyAbortSignal();
    abort.abort("why");
    let told = false;
    abort.once("abort", () => {
      told = true;
    });
    expect(abort.aborted).toBe(true);
    expect(told).toBe(false);
  });

  it("fires when the attempt it was handed to times out, with the TIMEOUT error as its reason", async () => {
    const heard: unknown[] = [];
    let handed: LazyAbortSignal | undefined;
    const outcome = await runWithRetries({
      skill: SKILL,
      options: { timeoutMs: 20 },
      timeouts: new ExecutionTimeouts({}),
      startedAt: performance.now(),
      shutdown: new HostShutdown(),
      cancellation: new RunCancellation(),
      invoke: (_attempt, abort) => {
        handed = abort;
        abort.once("abort", () => heard.push(abort.reason));
        return new Promise<never>(() => {});
      },
    });
    expect(outcome.succeeded).toBe(false);
    const error = outcome.succeeded ? undefined : outcome.error;
    expect((error as { code?: string }).code).toBe("TIMEOUT");
    expect(heard).toEqual([error]);
    expect(handed?.aborted).toBe(true);
  });
});

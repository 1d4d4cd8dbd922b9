import { SkillboxError } from "../errors/skillbox-error.js";
import type { SkillExecution } from "../types.js";
import { isSettled } from "./decision-checks.js";
import type { WaitOptions } from "./durable-options.js";
import type { ExecutionEventHub } from "./execution-event-hub.js";

type MaybePromise<Value> = Value | Promise<Value>;

/** Where {@link waitUntilSettled} reads and follows an execution. */
export interface SettledWaitSource {
  /** The hub that publishes the execution's status changes and end. */
  hub: ExecutionEventHub;
  /**
   * The execution as it stands, read once subscribed; undefined when it is known not to be
   * settled (running in this process). Throws for an execution the caller may not see.
   */
  read(): MaybePromise<SkillExecution | undefined>;
  /** Called when the first read did not settle it, before the wait starts. */
  onPending?(): void;
  /** The execution when the timeout fires (for the error's data); undefined for the first read's. */
  readAtTimeout(): MaybePromise<SkillExecution | undefined>;
}

/**
 * `wait()` of an executor: resolves with the execution once it is final (or awaiting approval,
 * with `returnOnApproval`); ends `WAIT_TIMEOUT` after `timeoutMs`, `WAIT_ABORTED` by `signal`,
 * and `BUSY` when the hub closes first. Subscribes before the first read: an end committed
 * between the two still reaches the subscription.
 */
export async function waitUntilSettled(
  id: string,
  options: WaitOptions,
  source: SettledWaitSource,
): Promise<SkillExecution> {
  const timeoutMs = options.timeoutMs;
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === "number" && timeoutMs >= 0 && Number.isFinite(timeoutMs))
  ) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `wait: \`timeoutMs\` must be a number of milliseconds of at least 0, got ${JSON.stringify(timeoutMs)}`,
    );
  }
  const subscription = source.hub.subscribe(
    { ids: new Set([id]) },
    { signal: options.signal, endAfterFinished: true },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const current = await source.read();
    if (current !== undefined && isSettled(current, options.returnOnApproval)) return current;
    source.onPending?.();
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        void Promise.resolve()
          .then(() => source.readAtTimeout())
          .then(
            (now) => {
              const execution = now ?? current;
              if (execution === undefined) return;
              subscription.fail(
                new SkillboxError(
                  "WAIT_TIMEOUT",
                  `Execution ${id} had not ended after ${timeoutMs} ms of waiting (it is ${execution.status}); wait again or follow its events`,
                  { data: { execution } },
                ),
              );
            },
            (error: unknown) => subscription.fail(error),
          );
      }, timeoutMs);
    }
    for await (const event of subscription) {
      if (event.type === "finished") return event.execution;
      if (event.type === "status" && isSettled(event.execution, options.returnOnApproval))
        return event.execution;
    }
    // The stream ended without the final record: only a closing executor ends it so.
    throw new SkillboxError("BUSY", `The executor closed while waiting for execution ${id}`);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    await subscription.return();
  }
}

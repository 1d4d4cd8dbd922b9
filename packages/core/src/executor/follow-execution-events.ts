import { isFinalExecutionStatus, type SkillExecution } from "../types.js";
import type { EventsOptions } from "./durable-options.js";
import type { ExecutionEventHub, ExecutionStreamEvent } from "./execution-event-hub.js";
import { formatTimestamp } from "./format-timestamp.js";

/** Where {@link followExecutionEvents} reads and follows an execution. */
export interface ExecutionEventsSource {
  /** The hub that publishes the execution's changes. */
  hub: ExecutionEventHub;
  /** The execution as it stands, read once subscribed; throws for one the caller may not see. */
  read(): SkillExecution | Promise<SkillExecution>;
  /** Called once the first event of an unfinished execution is out, before following it. */
  onPending?(): void;
}

/**
 * `events()` of an executor: the execution's current state first (`finished` and done when it
 * has ended, else `status`), then every change until it finishes. Subscribes before the read: a
 * change committed between the two still reaches the stream.
 */
export async function* followExecutionEvents(
  id: string,
  options: EventsOptions,
  source: ExecutionEventsSource,
): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
  const subscription = source.hub.subscribe(
    { ids: new Set([id]) },
    { signal: options.signal, endAfterFinished: true },
  );
  try {
    const current = await source.read();
    if (isFinalExecutionStatus(current.status)) {
      yield { type: "finished", executionId: id, execution: current };
      return;
    }
    yield {
      type: "status",
      executionId: id,
      status: current.status,
      at: formatTimestamp(Date.now()),
      execution: current,
    };
    source.onPending?.();
    yield* subscription;
  } finally {
    await subscription.return();
  }
}

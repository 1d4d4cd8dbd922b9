import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionProgress, ExecutionStatus, SkillExecution } from "../types.js";

/** One event of an execution's life, as `events()` and `watchExecutions()` yield it. */
export type ExecutionStreamEvent =
  | { type: "status"; executionId: string; status: ExecutionStatus; at: string; execution: SkillExecution }
  | { type: "progress"; executionId: string; progress: ExecutionProgress }
  | { type: "finished"; executionId: string; execution: SkillExecution };

/** Which executions a subscription hears about. */
export interface EventFilter {
  /** Only these executions. */
  ids?: ReadonlySet<string>;
  /** Only executions of this owner. */
  owner?: string;
  /** Only executions of this skill (by name). */
  skill?: string;
}

/** Who an event is about, for filtering (progress events carry no record). */
export interface EventSubject {
  owner: string;
  skillName: string;
}

/** Events a subscriber may have waiting before the slowest progress reports are merged. */
const MAX_BUFFERED_EVENTS = 10_000;

/**
 * One subscriber's queue: events wait here until its consumer pulls them. Bounded: a slow
 * consumer first loses intermediate progress reports (the latest per execution stays); if
 * status changes alone overflow it, its stream ends with `BUSY` rather than grow without end.
 */
export class EventSubscription implements AsyncIterableIterator<ExecutionStreamEvent> {
  private readonly buffer: ExecutionStreamEvent[] = [];
  private waiting: ((result: IteratorResult<ExecutionStreamEvent>) => void) | undefined;
  private failWaiting: ((error: unknown) => void) | undefined;
  private ended = false;
  private failure: unknown;

  constructor(
    readonly filter: EventFilter,
    private readonly detach: (subscription: EventSubscription) => void,
    /** Ends the stream after the `finished` event of every id in the filter. */
    private readonly endAfterFinished: boolean,
  ) {}

  accepts(event: ExecutionStreamEvent, subject: EventSubject): boolean {
    const { filter } = this;
    if (filter.ids !== undefined && !filter.ids.has(event.executionId)) return false;
    if (filter.owner !== undefined && filter.owner !== subject.owner) return false;
    if (filter.skill !== undefined && filter.skill !== subject.skillName) return false;
    return true;
  }

  push(event: ExecutionStreamEvent): void {
    if (this.ended) return;
    if (this.waiting !== undefined) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.failWaiting = undefined;
      resolve({ value: event, done: false });
    } else {
      this.buffer.push(event);
      if (this.buffer.length > MAX_BUFFERED_EVENTS) this.shrink();
    }
    if (this.endAfterFinished && event.type === "finished") this.finishedOne(event.executionId);
  }

  /** Ends the stream with `error` once the events before it were pulled. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = error;
    this.close();
    if (this.failWaiting !== undefined) {
      const reject = this.failWaiting;
      this.waiting = undefined;
      this.failWaiting = undefined;
      reject(error);
    }
  }

  next(): Promise<IteratorResult<ExecutionStreamEvent>> {
    const event = this.buffer.shift();
    if (event !== undefined) return Promise.resolve({ value: event, done: false });
    if (this.failure !== undefined) {
      const failure = this.failure;
      this.failure = undefined;
      return Promise.reject(failure);
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<ExecutionStreamEvent>> {
    this.buffer.length = 0;
    this.failure = undefined;
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionStreamEvent> {
    return this;
  }

  private remaining: Set<string> | undefined;

  private finishedOne(id: string): void {
    this.remaining ??= new Set(this.filter.ids);
    this.remaining.delete(id);
    if (this.remaining.size === 0) this.close();
  }

  /** Marks the stream ended; what is buffered can still be pulled. */
  private close(): void {
    if (this.ended) return;
    this.ended = true;
    this.detach(this);
    if (this.waiting !== undefined && this.failure === undefined) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.failWaiting = undefined;
      resolve({ value: undefined, done: true });
    }
  }

  /** Merges progress reports (the latest per execution stays); ends the stream if that is not enough. */
  private shrink(): void {
    const latestProgress = new Map<string, number>();
    this.buffer.forEach((event, index) => {
      if (event.type === "progress") latestProgress.set(event.executionId, index);
    });
    const kept = this.buffer.filter(
      (event, index) => event.type !== "progress" || latestProgress.get(event.executionId) === index,
    );
    this.buffer.length = 0;
    this.buffer.push(...kept);
    if (this.buffer.length > MAX_BUFFERED_EVENTS) {
      this.buffer.length = 0;
      this.fail(
        new SkillboxError(
          "BUSY",
          `An execution event stream fell more than ${MAX_BUFFERED_EVENTS} events behind its consumer and was ended; read it faster or narrow its filter`,
        ),
      );
    }
  }
}

/**
 * The in-process side of execution events: who listens, and handing each event to the
 * subscriptions whose filter takes it. Events of other processes arrive through the relay of
 * `DurableExecutions`, which publishes them here too.
 */
export class ExecutionEventHub {
  /** Subscriptions that follow given ids, by id: an event reaches only those of its execution. */
  private readonly byId = new Map<string, Set<EventSubscription>>();
  /** Subscriptions filtered otherwise (owner, skill, or nothing): every event is offered to each. */
  private readonly general = new Set<EventSubscription>();
  private count = 0;

  /** Whether anyone listens: publishing costs nothing otherwise. */
  get active(): boolean {
    return this.count > 0;
  }

  /**
   * Whether an event of execution `id` would reach anyone. With `owner` (who the execution
   * belongs to), a general subscription filtered to another owner does not count.
   */
  follows(id: string, owner?: string): boolean {
    if (this.byId.has(id)) return true;
    if (owner === undefined) return this.general.size > 0;
    for (const subscription of this.general) {
      const wanted = subscription.filter.owner;
      if (wanted === undefined || wanted === owner) return true;
    }
    return false;
  }

  /** The ids some subscription follows by id: what the relay checks across processes. */
  followedIds(): string[] {
    return [...this.byId.keys()];
  }

  publish(event: ExecutionStreamEvent, subject: EventSubject): void {
    if (this.count === 0) return;
    const followers = this.byId.get(event.executionId);
    // A push may end its subscription, which leaves the set: iterating a Set is safe across that.
    if (followers !== undefined) {
      for (const subscription of followers)
        if (subscription.accepts(event, subject)) subscription.push(event);
    }
    for (const subscription of this.general)
      if (subscription.accepts(event, subject)) subscription.push(event);
  }

  /**
   * A new subscription, ended by `signal` (with `WAIT_ABORTED`) or by the consumer's `return()`;
   * with `endAfterFinished`, also after the `finished` event of each of `filter.ids`.
   */
  subscribe(
    filter: EventFilter,
    options: { signal?: AbortSignal; endAfterFinished?: boolean } = {},
  ): EventSubscription {
    const { signal } = options;
    const onAbort = () =>
      subscription.fail(new SkillboxError("WAIT_ABORTED", "The event stream was aborted by its signal"));
    const subscription = new EventSubscription(
      filter,
      (ended) => {
        this.count--;
        if (ended.filter.ids === undefined) this.general.delete(ended);
        else {
          for (const id of ended.filter.ids) {
            const followers = this.byId.get(id);
            followers?.delete(ended);
            if (followers?.size === 0) this.byId.delete(id);
          }
        }
        signal?.removeEventListener("abort", onAbort);
      },
      options.endAfterFinished === true && filter.ids !== undefined,
    );
    this.count++;
    if (filter.ids === undefined) this.general.add(subscription);
    else {
      for (const id of filter.ids) {
        let followers = this.byId.get(id);
        if (followers === undefined) {
          followers = new Set();
          this.byId.set(id, followers);
        }
        followers.add(subscription);
      }
    }
    if (signal !== undefined) {
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
    return subscription;
  }

  /** Ends every subscription (the executor closed). */
  closeAll(error: unknown): void {
    const all = [...this.general, ...new Set([...this.byId.values()].flatMap((followers) => [...followers]))];
    for (const subscription of all) subscription.fail(error);
  }
}

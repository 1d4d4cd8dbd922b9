import {
  type Attributes,
  type Counter,
  createNoopMeter,
  type Histogram,
  type UpDownCounter,
} from "@opentelemetry/api";
import { perMeterProvider } from "./per-meter-provider.js";

/** The instruments of one meter provider. */
interface Instruments {
  /** No SDK: nothing is recorded, so no attributes are built either. */
  noop: boolean;
  executions: Counter;
  duration: Histogram;
  queueWait: Histogram;
  active: UpDownCounter;
}

/** Seconds buckets for durations: a millisecond up to ten minutes. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/**
 * The executor's metrics: executions by skill and status, their duration and queue wait, and
 * the executions under way (instruments made per meter provider, see {@link perMeterProvider}).
 */
export class ExecutionMetrics {
  private readonly current = perMeterProvider((provider): Instruments => {
    const meter = provider.getMeter("@skillbox/core");
    return {
      noop: meter === createNoopMeter(),
      executions: meter.createCounter("skillbox.executions", {
        description: "Executions that ended, by skill and final status",
        unit: "{execution}",
      }),
      duration: meter.createHistogram("skillbox.execution.duration", {
        description: "Wall time of an execution from its start to its final state",
        unit: "s",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
      queueWait: meter.createHistogram("skillbox.execution.queue_wait", {
        description: "Time a submitted execution waited in the queue before it ran",
        unit: "s",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
      active: meter.createUpDownCounter("skillbox.executions.active", {
        description: "Executions running in this process",
        unit: "{execution}",
      }),
    };
  });

  /** An execution starts running here. */
  started(skillName: string): void {
    const instruments = this.current();
    if (!instruments.noop) instruments.active.add(1, { "gen_ai.tool.name": skillName });
  }

  /** A queued execution starts after `waitMs` in the queue. */
  dequeued(skillName: string, waitMs: number): void {
    const instruments = this.current();
    if (!instruments.noop)
      instruments.queueWait.record(Math.max(waitMs, 0) / 1000, { "gen_ai.tool.name": skillName });
  }

  /**
   * An execution stops running here: ended with `status` (and `errorCode`) after `durationMs`, or
   * paused for approval (`durationMs` undefined: it is not over).
   */
  stopped(
    skillName: string,
    status: string,
    errorCode: string | undefined,
    durationMs: number | undefined,
  ): void {
    const instruments = this.current();
    if (instruments.noop) return;
    instruments.active.add(-1, { "gen_ai.tool.name": skillName });
    if (durationMs === undefined) return;
    const attributes: Attributes = { "gen_ai.tool.name": skillName, "skillbox.status": status };
    if (errorCode !== undefined) attributes["skillbox.error.code"] = errorCode;
    instruments.executions.add(1, attributes);
    instruments.duration.record(durationMs / 1000, attributes);
  }
}

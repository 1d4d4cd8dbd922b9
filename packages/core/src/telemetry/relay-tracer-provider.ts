import {
  type Attributes,
  type AttributeValue,
  type Context,
  context as contextApi,
  createContextKey,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanAttributes,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { randomSpanId, randomTraceId } from "./skillbox-id-generator.js";
import type { RelayedAttributes, RelayedSpan, SpanRelay, SpanRelayLimits } from "./span-relay.js";

/** Where a task's context holds the {@link SpanRelay} its spans go to. */
export const SPAN_RELAY_KEY = createContextKey("skillbox.span-relay");

/** The span relay a task runs with: the one in `context`, if any. */
function spanRelayOf(context: Context): SpanRelay | undefined {
  return context.getValue(SPAN_RELAY_KEY) as SpanRelay | undefined;
}

/**
 * The tracer provider of a worker thread or a sandbox: spans made under a task's context are
 * recorded into that task's {@link SpanRelay}, and go back with the result for the host to
 * replay; outside a task (or under an unsampled parent) spans only carry the context on.
 */
export class RelayTracerProvider implements TracerProvider {
  private readonly tracer = new RelayTracer();

  getTracer(): Tracer {
    return this.tracer;
  }
}

class RelayTracer implements Tracer {
  startSpan(name: string, options: SpanOptions = {}, context: Context = contextApi.active()): Span {
    const parent = options.root === true ? undefined : trace.getSpanContext(context);
    const relay = spanRelayOf(context);
    if (relay === undefined || (parent !== undefined && (parent.traceFlags & TraceFlags.SAMPLED) === 0)) {
      return trace.wrapSpanContext(
        parent === undefined
          ? { traceId: randomTraceId(), spanId: randomSpanId(), traceFlags: TraceFlags.NONE }
          : { ...parent, spanId: randomSpanId(), isRemote: false },
      );
    }
    const spanContext: SpanContext = {
      traceId: parent?.traceId ?? randomTraceId(),
      spanId: randomSpanId(),
      traceFlags: TraceFlags.SAMPLED,
      ...(parent?.traceState === undefined ? {} : { traceState: parent.traceState }),
    };
    return new RelaySpan({ relay, name, context: spanContext, parentSpanId: parent?.spanId, options });
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.pop() as F;
    const [options, parentContext] = rest as [SpanOptions | undefined, Context | undefined];
    const parent = parentContext ?? contextApi.active();
    const span = this.startSpan(name, options, parent);
    return contextApi.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>;
  }
}

/** Epoch time now, `[seconds, nanoseconds]`, with the sub-millisecond part of `performance.now()`. */
function now(): HrTime {
  return addHrTimes(millisToHrTime(performance.timeOrigin), millisToHrTime(performance.now()));
}

function millisToHrTime(millis: number): HrTime {
  const seconds = Math.trunc(millis / 1_000);
  const nanos = Math.round((millis - seconds * 1_000) * 1_000_000);
  return nanos >= 1_000_000_000 ? [seconds + 1, nanos - 1_000_000_000] : [seconds, nanos];
}

function addHrTimes(a: HrTime, b: HrTime): HrTime {
  const nanos = a[1] + b[1];
  return nanos >= 1_000_000_000 ? [a[0] + b[0] + 1, nanos - 1_000_000_000] : [a[0] + b[0], nanos];
}

/** A `TimeInput` as epoch `[seconds, nanoseconds]`: a number below the time origin is `performance.now()`-relative, as in the SDK. */
function toHrTime(time: TimeInput | undefined): HrTime {
  if (time === undefined) return now();
  if (Array.isArray(time)) return [time[0], time[1]];
  if (time instanceof Date) return millisToHrTime(time.getTime());
  return time < performance.timeOrigin
    ? addHrTimes(millisToHrTime(performance.timeOrigin), millisToHrTime(time))
    : millisToHrTime(time);
}

/** What a {@link RelaySpan} starts with. */
interface RelaySpanStart {
  relay: SpanRelay;
  name: string;
  context: SpanContext;
  parentSpanId: string | undefined;
  options: SpanOptions;
}

/** A span recording into a task's relay; ended, it becomes a {@link RelayedSpan} there. */
class RelaySpan implements Span {
  private readonly relay: SpanRelay;
  private name: string;
  private readonly context: SpanContext;
  private readonly parentSpanId: string | undefined;
  private readonly limits: SpanRelayLimits;
  private readonly startTime: HrTime;
  private readonly kind: SpanKind;
  private readonly attributes: RelayedAttributes = {};
  private attributeCount = 0;
  private readonly events: RelayedSpan["events"] = [];
  private readonly links: NonNullable<RelayedSpan["links"]> = [];
  private status: SpanStatus = { code: SpanStatusCode.UNSET };
  private ended = false;
  /** A rough size of what the span holds, so a task's spans stay within the relay's byte limit. */
  private bytes: number;

  constructor(start: RelaySpanStart) {
    const { relay, name, options } = start;
    this.relay = relay;
    this.name = name;
    this.context = start.context;
    this.parentSpanId = start.parentSpanId;
    this.limits = relay.limits;
    this.kind = options.kind ?? SpanKind.INTERNAL;
    this.startTime = toHrTime(options.startTime);
    this.bytes = 128 + name.length;
    if (options.attributes !== undefined) this.setAttributes(options.attributes);
    if (options.links !== undefined) this.addLinks(options.links);
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: SpanAttributes[string]): this {
    if (this.ended || value === undefined || value === null) return this;
    if (!(key in this.attributes)) {
      if (this.attributeCount >= this.limits.maxAttributes) return this;
      this.attributeCount++;
    }
    const bounded = this.bounded(value);
    this.bytes += key.length + sizeOf(bounded);
    this.attributes[key] = bounded;
    return this;
  }

  setAttributes(attributes: SpanAttributes): this {
    for (const [key, value] of Object.entries(attributes)) this.setAttribute(key, value);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended || this.events.length >= this.limits.maxEvents) return this;
    const isTime =
      typeof attributesOrTime === "number" ||
      Array.isArray(attributesOrTime) ||
      attributesOrTime instanceof Date;
    const attributes = isTime ? undefined : (attributesOrTime as Attributes | undefined);
    const event: RelayedSpan["events"][number] = {
      name,
      time: toHrTime(isTime ? (attributesOrTime as TimeInput) : time),
    };
    if (attributes !== undefined) event.attributes = this.boundedAttributes(attributes);
    this.bytes += 32 + name.length;
    this.events.push(event);
    return this;
  }

  addLink(link: Link): this {
    if (this.ended || this.links.length >= this.limits.maxLinks) return this;
    const { traceId, spanId, traceFlags } = link.context;
    this.links.push({
      traceId,
      spanId,
      traceFlags,
      ...(link.attributes === undefined ? {} : { attributes: this.boundedAttributes(link.attributes) }),
    });
    this.bytes += 64;
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended) return this;
    const message = status.message === undefined ? undefined : this.boundedString(status.message);
    this.status = message === undefined ? { code: status.code } : { code: status.code, message };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    const span: RelayedSpan = {
      name: this.name,
      kind: this.kind,
      traceId: this.context.traceId,
      spanId: this.context.spanId,
      startTime: this.startTime,
      endTime: toHrTime(endTime),
      attributes: this.attributes,
      events: this.events,
      status: this.status,
    };
    if (this.parentSpanId !== undefined) span.parentSpanId = this.parentSpanId;
    if (this.links.length > 0) span.links = this.links;
    this.relay.record(span, this.bytes);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === "string") {
      attributes["exception.message"] = exception;
    } else {
      const type = exception.name ?? (exception.code === undefined ? undefined : String(exception.code));
      if (type !== undefined) attributes["exception.type"] = type;
      if (exception.message !== undefined) attributes["exception.message"] = exception.message;
      if (exception.stack !== undefined) attributes["exception.stacktrace"] = exception.stack;
    }
    this.addEvent("exception", attributes, time);
  }

  private boundedString(value: string): string {
    return value.length > this.limits.maxValueLength ? value.slice(0, this.limits.maxValueLength) : value;
  }

  private bounded(value: AttributeValue): AttributeValue {
    if (typeof value === "string") return this.boundedString(value);
    if (!Array.isArray(value)) return value;
    const items =
      value.length > this.limits.maxValueLength ? value.slice(0, this.limits.maxValueLength) : [...value];
    return items.map((item) =>
      typeof item === "string" ? this.boundedString(item) : item,
    ) as AttributeValue;
  }

  private boundedAttributes(attributes: Attributes): RelayedAttributes {
    const kept: RelayedAttributes = {};
    let count = 0;
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null) continue;
      if (count++ >= this.limits.maxAttributes) break;
      const bounded = this.bounded(value);
      this.bytes += key.length + sizeOf(bounded);
      kept[key] = bounded;
    }
    return kept;
  }
}

function sizeOf(value: AttributeValue): number {
  if (typeof value === "string") return value.length + 2;
  if (Array.isArray(value))
    return value.reduce<number>((total, item) => total + (typeof item === "string" ? item.length + 3 : 8), 2);
  return 8;
}

import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  type IdGenerator,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { SkillExecution } from "@skillbox/core";
import { createSkillboxIdGenerator } from "@skillbox/core";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";

/** A metric reader the test collects from when it wants (no timer). */
class CollectingReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** One data point of a collected metric, flattened for assertions. */
export interface MetricPoint {
  name: string;
  attributes: Record<string, unknown>;
  /** A counter's or gauge's value; a histogram's is its `{ count, sum, … }`. */
  value: unknown;
}

/** The OpenTelemetry SDK installed globally for one test file, recording into memory. */
export interface RecordingTelemetry {
  exporter: InMemorySpanExporter;
  /** The spans ended so far. */
  spans(): ReadableSpan[];
  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[];
  /** The one ended span named `name` (the test fails unless there is exactly one). */
  only(name: string): ReadableSpan;
  /** The span that is the parent of `span`, if it ended. */
  parentOf(span: ReadableSpan): ReadableSpan | undefined;
  /** The ended spans whose parent is `span`, in start order. */
  childrenOf(span: ReadableSpan): ReadableSpan[];
  /**
   * The tree under `root` as indented names, one span a line, children in start order:
   * `"execute_tool echo\n  attempt 1"`. Handy in `expect(...).toBe(...)`.
   */
  tree(root: ReadableSpan): string;
  /** Collects every metric point now. */
  collect(): Promise<MetricPoint[]>;
  /** Forgets the spans recorded so far. */
  reset(): void;
  /** Removes the globals again and shuts the providers down. */
  close(): Promise<void>;
}

/** Options of {@link installRecordingTelemetry}. */
export interface RecordingTelemetryOptions {
  /**
   * The ids of new spans; default: core's `createSkillboxIdGenerator()` (random, and spans relayed
   * from worker threads and sandboxes keep their ids), as `skillbox serve` sets it up.
   */
  idGenerator?: IdGenerator;
}

/**
 * Installs the real OpenTelemetry SDK as the global tracer and meter provider, with an
 * in-memory span exporter behind a simple span processor, AsyncLocalStorage context and the W3C
 * trace-context propagator — what an application's SDK set-up does, minus the network.
 */
export function installRecordingTelemetry(options: RecordingTelemetryOptions = {}): RecordingTelemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    idGenerator: options.idGenerator ?? createSkillboxIdGenerator(),
  });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  metrics.setGlobalMeterProvider(meterProvider);

  const spans = () => exporter.getFinishedSpans();
  const parentIdOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const childrenOf = (parent: ReadableSpan) =>
    spans()
      .filter((span) => parentIdOf(span) === parent.spanContext().spanId)
      .sort((a, b) => compareTimes(a.startTime, b.startTime));
  const render = (span: ReadableSpan, depth: number): string[] => [
    `${"  ".repeat(depth)}${span.name}`,
    ...childrenOf(span).flatMap((child) => render(child, depth + 1)),
  ];
  return {
    exporter,
    spans,
    named: (name) => spans().filter((span) => span.name === name),
    only(name) {
      const found = spans().filter((span) => span.name === name);
      expect(
        found.map((span) => span.name),
        `one ended span named "${name}"`,
      ).toEqual([name]);
      return found[0]!;
    },
    parentOf: (span) => spans().find((candidate) => candidate.spanContext().spanId === parentIdOf(span)),
    childrenOf,
    tree: (root) => render(root, 0).join("\n"),
    async collect() {
      const { resourceMetrics } = await reader.collect();
      return flatten(resourceMetrics);
    },
    reset: () => exporter.reset(),
    async close() {
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
      contextManager.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/**
 * {@link installRecordingTelemetry} for the tests of the enclosing `describe` (or file): installed
 * before the first, closed after the last, its spans forgotten before each test. Tests outside it
 * (a "without an SDK" block before it, say) see no SDK.
 */
export function useRecordingTelemetry(options: RecordingTelemetryOptions = {}): RecordingTelemetry {
  let installed: RecordingTelemetry | undefined;
  beforeAll(() => {
    installed = installRecordingTelemetry(options);
  });
  afterAll(async () => {
    await installed?.close();
    installed = undefined;
  });
  beforeEach(() => installed?.reset());
  const current = (): RecordingTelemetry => {
    if (installed === undefined)
      throw new Error("useRecordingTelemetry(): the SDK is installed only while its tests run");
    return installed;
  };
  return {
    get exporter() {
      return current().exporter;
    },
    spans: () => current().spans(),
    named: (name) => current().named(name),
    only: (name) => current().only(name),
    parentOf: (span) => current().parentOf(span),
    childrenOf: (span) => current().childrenOf(span),
    tree: (root) => current().tree(root),
    collect: () => current().collect(),
    reset: () => current().reset(),
    close: () => current().close(),
  };
}

function compareTimes(a: [number, number], b: [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}

function flatten(resourceMetrics: ResourceMetrics): MetricPoint[] {
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((metric) =>
      metric.dataPoints.map((point) => ({
        name: metric.descriptor.name,
        attributes: { ...point.attributes },
        value: point.value,
      })),
    ),
  );
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/**
 * Expects `traceparent` (a header a server received) to continue `execution`'s trace: its trace id
 * is the record's `traceId`, and the span it names as parent is the execution's span or one below
 * it. Returns the names from that span up to the execution's span (`["attempt 1", "execute_tool
 * http-request"]`), for the caller to check where in the tree the request was sent from.
 */
export function expectTraceparentOf(
  telemetry: RecordingTelemetry,
  execution: Pick<SkillExecution, "traceId" | "spanId">,
  traceparent: string | string[] | undefined,
): string[] {
  expect(typeof traceparent, "a single traceparent header").toBe("string");
  const match = TRACEPARENT.exec(traceparent as string);
  expect(match, `traceparent ${String(traceparent)} is W3C trace context`).not.toBeNull();
  const [, traceId, parentSpanId] = match as RegExpExecArray;
  expect(execution.traceId).not.toBeNull();
  expect(traceId).toBe(execution.traceId);
  let span = telemetry.spans().find((candidate) => candidate.spanContext().spanId === parentSpanId);
  expect(span, `the span ${parentSpanId} the traceparent names was recorded`).toBeDefined();
  const names: string[] = [];
  while (span !== undefined) {
    names.push(span.name);
    if (span.spanContext().spanId === execution.spanId) return names;
    span = telemetry.parentOf(span);
  }
  throw new Error(`the traceparent's span is not under the execution's span: ${names.join(" < ")}`);
}

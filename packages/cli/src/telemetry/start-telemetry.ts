import { DiagLogLevel, diag } from "@opentelemetry/api";
import { createSkillboxIdGenerator } from "@skillbox/core";
import type { OtlpProtocol, TelemetrySettings } from "./resolve-telemetry-settings.js";

/** The OpenTelemetry SDK `skillbox serve` / `dev` started. */
export interface RunningTelemetry {
  /** One line for the live log: what is exported where. */
  readonly summary: string;
  /** Exports what is still buffered (the last spans, a final metrics collection) and stops the SDK. */
  shutdown(): Promise<void>;
}

/** The part of an OTLP exporter's options used here: the JSON and protobuf exporters share it. */
interface ExporterConfig {
  url: string;
  headers?: Record<string, string>;
}

interface TraceExporterModule {
  OTLPTraceExporter: new (config: ExporterConfig) => import("@opentelemetry/sdk-trace-base").SpanExporter;
}

type PushMetricExporter = import("@opentelemetry/sdk-metrics").PushMetricExporter;

interface MetricExporterModule {
  OTLPMetricExporter: new (config: ExporterConfig) => PushMetricExporter;
}

/** The OTLP/HTTP exporters of one encoding, imported only when that encoding is used. */
async function exportersFor(
  protocol: OtlpProtocol,
): Promise<{ traces: TraceExporterModule; metrics: MetricExporterModule }> {
  if (protocol === "http/json") {
    const [traces, metrics] = await Promise.all([
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/exporter-metrics-otlp-http"),
    ]);
    return { traces, metrics };
  }
  const [traces, metrics] = await Promise.all([
    import("@opentelemetry/exporter-trace-otlp-proto"),
    import("@opentelemetry/exporter-metrics-otlp-proto"),
  ]);
  return { traces, metrics };
}

/** Options of {@link startTelemetry}. */
export interface StartTelemetryOptions {
  /**
   * Told about the first failed export (an unreachable collector, a refused key), once: the SDK
   * is otherwise silent about it. Not used when `OTEL_LOG_LEVEL` turns the SDK's own diagnostics on.
   */
  onExportError?: (message: string) => void;
}

/**
 * An error's fields as one line: an OTLP export error has the HTTP status as `code` and the
 * collector's answer as `data`. Undefined when there is no message to describe.
 */
function describeError(fields: { message?: unknown; code?: unknown; data?: unknown }): string | undefined {
  if (typeof fields.message !== "string") return undefined;
  const status = /^\d{3}$/.test(String(fields.code)) ? `HTTP ${fields.code} ` : "";
  const answer =
    typeof fields.data === "string" && fields.data !== "" ? `: ${fields.data.slice(0, 200)}` : "";
  return `${status}${fields.message}${answer}`;
}

/** The message of what the SDK's error handler logs: an error's own fields as JSON, or text. */
function messageOf(logged: unknown): string {
  if (typeof logged !== "string") return String(logged);
  try {
    const described = describeError(JSON.parse(logged) as { message?: unknown });
    if (described !== undefined) return described;
  } catch {
    // Not JSON (or JSON null): the text itself.
  }
  return logged;
}

/** `report`, called for the first message only. */
function once(report: (message: string) => void): (message: string) => void {
  let reported = false;
  return (message) => {
    if (reported) return;
    reported = true;
    report(message);
  };
}

/**
 * Reports a failed export of `exporter` itself: the periodic metric reader passes the error on
 * re-worded as text, without the HTTP status and the collector's answer.
 */
function reportingFailures<Exporter extends PushMetricExporter>(
  exporter: Exporter,
  report: (message: string) => void,
): Exporter {
  const exportMetrics = exporter.export.bind(exporter);
  exporter.export = (metrics, resultCallback) =>
    exportMetrics(metrics, (result) => {
      if (result.error !== undefined) report(describeError(result.error) ?? String(result.error));
      resultCallback(result);
    });
  return exporter;
}

/** Sends what the SDK logs at error level (a failed trace export among it) to `report`. */
function reportErrorsLogged(report: (message: string) => void): void {
  const ignore = () => {};
  diag.setLogger(
    {
      error(message: string, ...details: unknown[]) {
        report([messageOf(message), ...details.map(messageOf)].join(" "));
      },
      warn: ignore,
      info: ignore,
      debug: ignore,
      verbose: ignore,
    },
    { logLevel: DiagLogLevel.ERROR, suppressOverrideMessage: true },
  );
}

/**
 * Where the signals go, for the log: `OpenTelemetry: traces to http://127.0.0.1:4318/v1/traces
 * (http/json), metrics to http://127.0.0.1:4318/v1/metrics (http/json) as service "skillbox"`.
 */
function summarize(settings: TelemetrySettings): string {
  const parts = (["traces", "metrics"] as const).flatMap((signal) => {
    const target = settings[signal];
    return target === undefined ? [] : [`${signal} to ${target.url} (${target.protocol})`];
  });
  const service = settings.serviceName === undefined ? "" : ` as service "${settings.serviceName}"`;
  return `OpenTelemetry: ${parts.join(", ")}${service}`;
}

/**
 * Starts the OpenTelemetry Node SDK as {@link TelemetrySettings} say: OTLP/HTTP trace export
 * through a batch span processor, periodic OTLP/HTTP metric export, W3C trace-context and
 * baggage propagation (unless `OTEL_PROPAGATORS` says otherwise), AsyncLocalStorage context, and
 * core's id generator; the first failed export goes to `options.onExportError`. Everything is
 * imported here, on demand, so a CLI that exports nothing never loads the SDK.
 */
export async function startTelemetry(
  settings: TelemetrySettings,
  options: StartTelemetryOptions = {},
): Promise<RunningTelemetry> {
  const [{ NodeSDK }, { BatchSpanProcessor }, { PeriodicExportingMetricReader }] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/sdk-metrics"),
  ]);
  // The SDK registers its own diagnostics logger when OTEL_LOG_LEVEL is set; leave that one alone.
  const reportError =
    options.onExportError !== undefined && !process.env.OTEL_LOG_LEVEL?.trim()
      ? once(options.onExportError)
      : undefined;
  const headers = settings.headers === undefined ? {} : { headers: settings.headers };
  const spanProcessors = [];
  if (settings.traces !== undefined) {
    const { traces } = await exportersFor(settings.traces.protocol);
    spanProcessors.push(
      new BatchSpanProcessor(new traces.OTLPTraceExporter({ url: settings.traces.url, ...headers })),
    );
  }
  const metricReaders = [];
  if (settings.metrics !== undefined) {
    const { metrics } = await exportersFor(settings.metrics.protocol);
    const intervalMs = settings.metrics.intervalMs;
    const exporter = new metrics.OTLPMetricExporter({ url: settings.metrics.url, ...headers });
    metricReaders.push(
      new PeriodicExportingMetricReader({
        exporter: reportError === undefined ? exporter : reportingFailures(exporter, reportError),
        exportIntervalMillis: intervalMs,
        // The SDK refuses a timeout longer than the interval.
        exportTimeoutMillis: Math.min(30_000, intervalMs),
      }),
    );
  }
  const sdk = new NodeSDK({
    ...(settings.serviceName === undefined ? {} : { serviceName: settings.serviceName }),
    spanProcessors,
    metricReaders,
    // Skillbox writes no OpenTelemetry logs: no log exporter to start.
    logRecordProcessors: [],
    // Spans relayed from worker threads and containers keep the ids they were made with, so
    // their children and the traceparents they sent on stay linked.
    idGenerator: createSkillboxIdGenerator(),
  });
  sdk.start();
  if (reportError !== undefined) reportErrorsLogged(reportError);
  let stopping: Promise<void> | undefined;
  return {
    summary: summarize(settings),
    shutdown() {
      stopping ??= sdk.shutdown();
      return stopping;
    },
  };
}

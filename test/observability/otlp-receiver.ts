import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** An attribute value of OTLP/JSON (`{ stringValue }`, `{ intValue }`, …) made plain. */
type PlainValue = string | number | boolean | PlainValue[] | null;

/** One span of an OTLP/JSON export, flattened for assertions. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, PlainValue>;
  /** `{ code }`: 0 unset, 1 ok, 2 error. */
  status: { code?: number; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** The exporting resource's `service.name`. */
  serviceName: PlainValue;
  /** The instrumentation scope, such as `@skillbox/core`. */
  scope: string;
}

/** One metric of an OTLP/JSON export. */
export interface ReceivedMetric {
  name: string;
  serviceName: PlainValue;
  /** The data points' attributes. */
  points: Record<string, PlainValue>[];
}

/**
 * A loopback OTLP/HTTP receiver that decodes the JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`)
 * and accepts (without decoding) protobuf.
 */
export interface OtlpReceiver {
  /** Base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  /** Every export request so far: path, content type and headers. */
  readonly requests: { path: string; contentType: string | undefined; headers: IncomingHttpHeaders }[];
  spans(): ReceivedSpan[];
  metrics(): ReceivedMetric[];
  /** Resolves once `check` returns something other than undefined/false after an export, or rejects after `timeoutMs`. */
  waitFor<T>(check: () => T | undefined | false, description: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

interface KeyValue {
  key: string;
  value: AnyValue;
}

function plain(value: AnyValue | undefined): PlainValue {
  if (value === undefined) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  return null;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, PlainValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, plain(entry.value)]));
}

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  status?: { code?: number; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

interface TracesRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: ExportedSpan[] }[];
  }[];
}

interface MetricsRequest {
  resourceMetrics?: {
    resource?: { attributes?: KeyValue[] };
    scopeMetrics?: {
      metrics?: ({ name: string } & Record<string, { dataPoints?: { attributes?: KeyValue[] }[] }>)[];
    }[];
  }[];
}

/** Starts the receiver on 127.0.0.1 (a free port); `close()` it in the test's cleanup. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const listeners = new Set<() => void>();

  const receive = (path: string, body: string) => {
    if (path === "/v1/traces") {
      const parsed = JSON.parse(body) as TracesRequest;
      for (const resource of parsed.resourceSpans ?? []) {
        const serviceName = attributesOf(resource.resource?.attributes)["service.name"] ?? null;
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              status: span.status ?? {},
              startTimeUnixNano: span.startTimeUnixNano,
              endTimeUnixNano: span.endTimeUnixNano,
              serviceName,
              scope: scope.scope?.name ?? "",
            });
          }
        }
      }
    } else if (path === "/v1/metrics") {
      const parsed = JSON.parse(body) as MetricsRequest;
      for (const resource of parsed.resourceMetrics ?? []) {
        const serviceName = attributesOf(resource.resource?.attributes)["service.name"] ?? null;
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) {
            const data = Object.values(metric).find(
              (value): value is { dataPoints?: { attributes?: KeyValue[] }[] } =>
                typeof value === "object" && value !== null && "dataPoints" in value,
            );
            metrics.push({
              name: metric.name,
              serviceName,
              points: (data?.dataPoints ?? []).map((point) => attributesOf(point.attributes)),
            });
          }
        }
      }
    }
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = request.url ?? "";
      requests.push({ path, contentType: request.headers["content-type"], headers: request.headers });
      try {
        if (request.method !== "POST") throw new Error(`${request.method} is not an export`);
        // Protobuf exports are counted (`requests`), not decoded.
        if (request.headers["content-type"] === "application/json") {
          receive(path, Buffer.concat(chunks).toString("utf8"));
        }
        response.writeHead(200, { "content-type": "application/json" });
        response.end("{}");
      } catch (error) {
        response.writeHead(400, { "content-type": "text/plain" });
        response.end(String(error));
      }
      for (const listener of [...listeners]) listener();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans: () => [...spans],
    metrics: () => [...metrics],
    waitFor(check, description, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const attempt = () => {
          const result = check();
          if (result === undefined || result === false) return false;
          finish();
          resolve(result);
          return true;
        };
        const timer = setTimeout(() => {
          finish();
          reject(
            new Error(
              `no ${description} within ${timeoutMs} ms; received spans: ${spans.map((span) => span.name).join(", ")}`,
            ),
          );
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(attempt);
        };
        if (attempt()) return;
        listeners.add(attempt);
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** The chain of span names from `span` up to the root of what was received: `["attempt 1", "execute_tool echo", …]`. */
export function ancestryOf(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [span];
  let current = span;
  for (;;) {
    const parent = spans.find(
      (candidate) => candidate.traceId === current.traceId && candidate.spanId === current.parentSpanId,
    );
    if (parent === undefined || chain.includes(parent)) return chain;
    chain.push(parent);
    current = parent;
  }
}

/**
 * The spans of one trace as an indented waterfall, one span a line: offset from the trace's
 * start, duration, bar, name — what docs/observability.md shows.
 */
export function renderWaterfall(spans: ReceivedSpan[], traceId: string, width = 40): string {
  const inTrace = spans.filter((span) => span.traceId === traceId);
  const nanos = (text: string) => BigInt(text);
  const byValue = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
  const start = inTrace.map((span) => nanos(span.startTimeUnixNano)).sort(byValue)[0] ?? 0n;
  const end =
    inTrace
      .map((span) => nanos(span.endTimeUnixNano))
      .sort(byValue)
      .at(-1) ?? start;
  const total = Number(end - start) || 1;
  const ids = new Set(inTrace.map((span) => span.spanId));
  const childrenOf = (parentId: string) =>
    inTrace
      .filter((span) => span.parentSpanId === parentId)
      .sort((a, b) => Number(nanos(a.startTimeUnixNano) - nanos(b.startTimeUnixNano)));
  const roots = inTrace
    .filter((span) => !ids.has(span.parentSpanId))
    .sort((a, b) => Number(nanos(a.startTimeUnixNano) - nanos(b.startTimeUnixNano)));
  const milliseconds = (value: number) => `${(value / 1e6).toFixed(1)} ms`;
  const lines: string[] = [];
  const render = (span: ReceivedSpan, depth: number) => {
    const offset = Number(nanos(span.startTimeUnixNano) - start);
    const duration = Number(nanos(span.endTimeUnixNano) - nanos(span.startTimeUnixNano));
    const from = Math.min(width - 1, Math.floor((offset / total) * width));
    const length = Math.max(1, Math.round((duration / total) * width));
    const bar = `${" ".repeat(from)}${"█".repeat(Math.min(length, width - from))}`.padEnd(width);
    lines.push(
      `${milliseconds(offset).padStart(9)} ${milliseconds(duration).padStart(9)} |${bar}| ${"  ".repeat(depth)}${span.name}`,
    );
    for (const child of childrenOf(span.spanId)) render(child, depth + 1);
  };
  for (const root of roots) render(root, 0);
  return lines.join("\n");
}

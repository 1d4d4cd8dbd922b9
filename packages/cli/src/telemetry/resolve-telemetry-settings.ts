import { SkillboxError } from "@skillbox/core";
import { metricsIntervalSchema, OTLP_PROTOCOLS } from "../config/config-schema.js";
import type { SkillboxTelemetryConfig } from "../config/define-config.js";

/** An OTLP/HTTP encoding. */
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** Where and how one signal (traces or metrics) is exported. */
export interface SignalExport {
  /** The full URL the exporter posts to, such as `http://127.0.0.1:4318/v1/traces`. */
  url: string;
  protocol: OtlpProtocol;
}

/** What `skillbox serve` and `dev` start the OpenTelemetry SDK with; see {@link resolveTelemetrySettings}. */
export interface TelemetrySettings {
  /** `service.name`; undefined when `OTEL_RESOURCE_ATTRIBUTES` names it (the SDK reads it from there). */
  serviceName: string | undefined;
  /** Trace export (undefined: traces are not exported). */
  traces: SignalExport | undefined;
  /** Metric export (undefined: metrics are not exported). */
  metrics: (SignalExport & { intervalMs: number }) | undefined;
  /** The config file's headers (the exporters add `OTEL_EXPORTER_OTLP_HEADERS` under them). */
  headers: Record<string, string> | undefined;
  recordInputs: boolean;
  recordOutputs: boolean;
}

type Signal = "traces" | "metrics";

const DEFAULT_ENDPOINT = "http://localhost:4318";
const DEFAULT_SERVICE_NAME = "skillbox";
const DEFAULT_METRICS_INTERVAL_MS = 60_000;
const SIGNAL_PATHS: Record<Signal, string> = { traces: "v1/traces", metrics: "v1/metrics" };
const EXPORTER_VARIABLES: Record<Signal, string> = {
  traces: "OTEL_TRACES_EXPORTER",
  metrics: "OTEL_METRICS_EXPORTER",
};

/** A variable's text, or undefined when unset or blank (the OpenTelemetry rule: empty means unset). */
function variable(environment: NodeJS.ProcessEnv, name: string): string | undefined {
  const text = environment[name]?.trim();
  return text === undefined || text === "" ? undefined : text;
}

function invalidVariable(name: string, requirement: string, text: string): SkillboxError {
  return new SkillboxError("CONFIG_INVALID", `${name} ${requirement}, got ${JSON.stringify(text)}`, {
    data: { variable: name },
  });
}

/**
 * `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`: "off" for `none`, "on" when it names
 * `otlp`, undefined when unset. Other exporters (zipkin, console, prometheus) are not bundled.
 */
function exporterChoice(environment: NodeJS.ProcessEnv, signal: Signal): "on" | "off" | undefined {
  const name = EXPORTER_VARIABLES[signal];
  const text = variable(environment, name);
  if (text === undefined) return undefined;
  const entries = text.split(",").map((entry) => entry.trim().toLowerCase());
  const unknown = entries.find((entry) => entry !== "otlp" && entry !== "none" && entry !== "");
  if (unknown !== undefined) {
    throw invalidVariable(
      name,
      'must be "otlp" or "none" (skillbox serve and dev export over OTLP/HTTP only; run a collector for other backends)',
      text,
    );
  }
  return entries.includes("otlp") ? "on" : "off";
}

function endpointVariable(environment: NodeJS.ProcessEnv, name: string): string | undefined {
  const text = variable(environment, name);
  if (text !== undefined && !/^https?:\/\//i.test(text)) {
    throw invalidVariable(name, 'must be an http(s) URL such as "http://127.0.0.1:4318"', text);
  }
  return text;
}

function protocolOf(
  config: SkillboxTelemetryConfig | undefined,
  environment: NodeJS.ProcessEnv,
  signal: Signal,
): OtlpProtocol {
  if (config?.protocol !== undefined) return config.protocol;
  for (const name of [`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_PROTOCOL`, "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const text = variable(environment, name);
    if (text === undefined) continue;
    if ((OTLP_PROTOCOLS as readonly string[]).includes(text)) return text as OtlpProtocol;
    throw invalidVariable(
      name,
      'must be "http/protobuf" or "http/json" (skillbox serve and dev export over OTLP/HTTP; gRPC is not bundled)',
      text,
    );
  }
  return "http/protobuf";
}

/** The signal's URL: the file's endpoint, else the signal's own variable as it is, else the base variable. */
function urlOf(
  config: SkillboxTelemetryConfig | undefined,
  environment: NodeJS.ProcessEnv,
  signal: Signal,
): string {
  const path = SIGNAL_PATHS[signal];
  if (config?.endpoint !== undefined) return `${config.endpoint.replace(/\/+$/, "")}/${path}`;
  const own = endpointVariable(environment, `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`);
  if (own !== undefined) return own;
  const base = endpointVariable(environment, "OTEL_EXPORTER_OTLP_ENDPOINT") ?? DEFAULT_ENDPOINT;
  return `${base.replace(/\/+$/, "")}/${path}`;
}

/** `service.name` from `OTEL_RESOURCE_ATTRIBUTES` ("key1=value1,key2=value2", values percent-encoded). */
function serviceNameInResourceAttributes(environment: NodeJS.ProcessEnv): string | undefined {
  const text = variable(environment, "OTEL_RESOURCE_ATTRIBUTES");
  for (const pair of text?.split(",") ?? []) {
    const [key, ...value] = pair.split("=");
    if (key?.trim() === "service.name" && value.length > 0) return value.join("=").trim();
  }
  return undefined;
}

function metricsIntervalOf(
  config: SkillboxTelemetryConfig | undefined,
  environment: NodeJS.ProcessEnv,
): number {
  if (config?.metricsIntervalMs !== undefined) return config.metricsIntervalMs;
  const name = "OTEL_METRIC_EXPORT_INTERVAL";
  const text = variable(environment, name);
  if (text === undefined) return DEFAULT_METRICS_INTERVAL_MS;
  const parsed = metricsIntervalSchema.safeParse(Number(text));
  if (!parsed.success) throw invalidVariable(name, parsed.error.issues[0]?.message ?? "is invalid", text);
  return parsed.data;
}

/**
 * Decides whether `skillbox serve` and `dev` start the OpenTelemetry SDK, and with what:
 * undefined (no SDK, nothing exported, no cost) unless the config file has a `telemetry` block
 * or the standard variables ask for export — `OTEL_EXPORTER_OTLP_ENDPOINT`, a signal's own
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT` (that signal only), or
 * `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER=otlp`. `OTEL_SDK_DISABLED=true` and
 * `telemetry.enabled: false` always mean undefined; `OTEL_<SIGNAL>_EXPORTER=none` leaves that
 * signal out. A field of the file wins over its variable. A bad variable is `CONFIG_INVALID`
 * naming it and what it must be (the file's fields are checked when the config loads).
 */
export function resolveTelemetrySettings(
  config: SkillboxTelemetryConfig | undefined,
  environment: NodeJS.ProcessEnv = process.env,
): TelemetrySettings | undefined {
  if (variable(environment, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  if (config?.enabled === false) return undefined;
  const baseEndpoint = endpointVariable(environment, "OTEL_EXPORTER_OTLP_ENDPOINT") !== undefined;
  const wants = (signal: Signal): boolean => {
    const choice = exporterChoice(environment, signal);
    if (choice === "off") return false;
    const ownEndpoint =
      endpointVariable(environment, `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`) !== undefined;
    return config !== undefined || choice === "on" || baseEndpoint || ownEndpoint;
  };
  const traces = wants("traces");
  const metrics = wants("metrics");
  if (!traces && !metrics) return undefined;
  return {
    serviceName:
      config?.serviceName ??
      variable(environment, "OTEL_SERVICE_NAME") ??
      (serviceNameInResourceAttributes(environment) === undefined ? DEFAULT_SERVICE_NAME : undefined),
    traces: traces
      ? { url: urlOf(config, environment, "traces"), protocol: protocolOf(config, environment, "traces") }
      : undefined,
    metrics: metrics
      ? {
          url: urlOf(config, environment, "metrics"),
          protocol: protocolOf(config, environment, "metrics"),
          intervalMs: metricsIntervalOf(config, environment),
        }
      : undefined,
    headers: config?.headers,
    recordInputs: config?.recordInputs ?? false,
    recordOutputs: config?.recordOutputs ?? false,
  };
}

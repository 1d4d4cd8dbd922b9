import { describe, expect, it } from "vitest";
import { resolveTelemetrySettings } from "../src/telemetry/resolve-telemetry-settings.js";

const COLLECTOR = "http://collector.internal:4318";

describe("resolveTelemetrySettings", () => {
  it("starts nothing without a telemetry block or an export variable", () => {
    expect(resolveTelemetrySettings(undefined, {})).toBeUndefined();
    // Variables that configure export but do not ask for it.
    expect(
      resolveTelemetrySettings(undefined, {
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "tools",
        OTEL_EXPORTER_OTLP_ENDPOINT: "  ",
      }),
    ).toBeUndefined();
  });

  it("exports traces and metrics to OTEL_EXPORTER_OTLP_ENDPOINT, as service skillbox, over protobuf", () => {
    expect(resolveTelemetrySettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: `${COLLECTOR}/` })).toEqual({
      serviceName: "skillbox",
      traces: { url: `${COLLECTOR}/v1/traces`, protocol: "http/protobuf" },
      metrics: { url: `${COLLECTOR}/v1/metrics`, protocol: "http/protobuf", intervalMs: 60_000 },
      headers: undefined,
      recordInputs: false,
      recordOutputs: false,
    });
  });

  it("takes a signal's own endpoint as it is, and exports only that signal when nothing else asks", () => {
    const settings = resolveTelemetrySettings(undefined, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${COLLECTOR}/custom/traces`,
    });
    expect(settings?.traces?.url).toBe(`${COLLECTOR}/custom/traces`);
    expect(settings?.metrics).toBeUndefined();
    const metricsOnly = resolveTelemetrySettings(undefined, { OTEL_METRICS_EXPORTER: "otlp" });
    expect(metricsOnly?.traces).toBeUndefined();
    expect(metricsOnly?.metrics?.url).toBe("http://localhost:4318/v1/metrics");
  });

  it("leaves out a signal whose exporter is none, and everything with OTEL_SDK_DISABLED=true", () => {
    const environment = { OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR, OTEL_METRICS_EXPORTER: "none" };
    expect(resolveTelemetrySettings(undefined, environment)?.metrics).toBeUndefined();
    expect(resolveTelemetrySettings(undefined, environment)?.traces).toBeDefined();
    expect(
      resolveTelemetrySettings(
        { endpoint: COLLECTOR },
        { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" },
      ),
    ).toBeUndefined();
    expect(
      resolveTelemetrySettings({ endpoint: COLLECTOR }, { ...environment, OTEL_SDK_DISABLED: "TRUE" }),
    ).toBeUndefined();
  });

  it("starts with a telemetry block alone; the block's fields win over the variables", () => {
    const settings = resolveTelemetrySettings(
      {
        endpoint: COLLECTOR,
        protocol: "http/json",
        serviceName: "tools",
        headers: { "x-api-key": "k" },
        recordInputs: true,
        metricsIntervalMs: 5000,
      },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://elsewhere:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://elsewhere:4318/v1/traces",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "from-environment",
        OTEL_METRIC_EXPORT_INTERVAL: "1000",
      },
    );
    expect(settings).toEqual({
      serviceName: "tools",
      traces: { url: `${COLLECTOR}/v1/traces`, protocol: "http/json" },
      metrics: { url: `${COLLECTOR}/v1/metrics`, protocol: "http/json", intervalMs: 5000 },
      headers: { "x-api-key": "k" },
      recordInputs: true,
      recordOutputs: false,
    });
    expect(resolveTelemetrySettings({}, {})?.traces?.url).toBe("http://localhost:4318/v1/traces");
  });

  it("falls back to the variables for what the block leaves out", () => {
    const settings = resolveTelemetrySettings(
      { recordOutputs: true },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "from-environment",
        OTEL_METRIC_EXPORT_INTERVAL: "2000",
      },
    );
    expect(settings).toMatchObject({
      serviceName: "from-environment",
      traces: { url: `${COLLECTOR}/v1/traces`, protocol: "http/protobuf" },
      metrics: { protocol: "http/json", intervalMs: 2000 },
      recordOutputs: true,
    });
  });

  it("keeps the SDK off with enabled: false, whatever the variables ask", () => {
    expect(
      resolveTelemetrySettings({ enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR }),
    ).toBeUndefined();
  });

  it("leaves service.name to OTEL_RESOURCE_ATTRIBUTES when that names it", () => {
    const settings = resolveTelemetrySettings(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=tools",
    });
    expect(settings?.serviceName).toBeUndefined();
  });

  it("names the variable and what it must be when one is wrong", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        /^OTEL_EXPORTER_OTLP_PROTOCOL must be "http\/protobuf" or "http\/json" .*, got "grpc"$/,
      ],
      [
        { OTEL_TRACES_EXPORTER: "zipkin" },
        /^OTEL_TRACES_EXPORTER must be "otlp" or "none" .*, got "zipkin"$/,
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
        /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL .*, got "collector:4318"$/,
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR, OTEL_METRIC_EXPORT_INTERVAL: "10" },
        /^OTEL_METRIC_EXPORT_INTERVAL must be at least 1000 milliseconds .*, got "10"$/,
      ],
    ];
    for (const [environment, message] of cases) {
      expect(() => resolveTelemetrySettings(undefined, environment)).toThrow(
        expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringMatching(message) }),
      );
    }
  });
});

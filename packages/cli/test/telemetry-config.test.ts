import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
});

afterEach(async () => {
  await project.cleanup();
});

describe("skillbox serve: the telemetry block", { timeout: 60_000 }, () => {
  it("fails naming the file, the field and what it must be", async () => {
    project.tree.write(
      "skillbox.config.mjs",
      'export default { telemetry: { protocol: "grpc", endpoint: "collector:4318", metricsIntervalMs: 10, sampling: 1 } };\n',
    );
    const result = await project.run(["serve", "--port", "0"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error CONFIG_INVALID: skillbox\.config\.mjs: `telemetry\.endpoint` must be the collector's base URL, such as "http:\/\/127\.0\.0\.1:4318"$/m,
    );
    expect(result.stderr).toMatch(
      /^ *skillbox\.config\.mjs: `telemetry\.protocol` must be "http\/protobuf" or "http\/json"$/m,
    );
    expect(result.stderr).toMatch(
      /^ *skillbox\.config\.mjs: `telemetry\.metricsIntervalMs` must be at least 1000/m,
    );
    expect(result.stderr).toMatch(/unknown field `telemetry\.sampling`; check the spelling/);
  });

  it("fails naming the variable when an OTEL_* variable is wrong, before listening", async () => {
    const result = await project.run(["serve", "--port", "0"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error CONFIG_INVALID: OTEL_EXPORTER_OTLP_PROTOCOL must be "http\/protobuf" or "http\/json" \(.*\), got "grpc"$/m,
    );
    expect(result.stdout).not.toMatch(/listening/);
  });

  it("keeps other commands free of it: `skillbox list` ignores a bad OTEL_* variable", async () => {
    const result = await project.run(["list", "--json"], { env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } });
    expect(result.code).toBe(0);
  });
});

import { readFileSync } from "node:fs";
import type { JsonSchema } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import forecastWeather, { convertCelsius } from "../index.js";

interface PackageJson {
  name: string;
  version: string;
  description: string;
  main: string;
  files: string[];
  dependencies?: Record<string, string>;
  skillbox: { input: JsonSchema; output: JsonSchema; handler: string; tags: string[]; timeoutMs: number };
}

const packageJson = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
) as PackageJson;

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with the skill registered from package.json, the way the loader registers an npm package. */
function hostWithWeather(): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  const { name, version, description, skillbox } = packageJson;
  host.registry.register({ name, version, description, ...skillbox, handler: "weather", apiKeyId: "system" });
  host.executor.registerHandler("weather", forecastWeather);
  return host;
}

describe("@acme/skill-weather", () => {
  it("is a self-contained package: no dependencies, no imports, handler and main shipped", () => {
    const source = readFileSync(new URL("../index.js", import.meta.url), "utf8");
    expect(packageJson.dependencies).toBeUndefined();
    expect(source).not.toMatch(/^\s*import\s|\bimport\(|\brequire\(/m);
    expect(packageJson.files).toContain(packageJson.main);
    expect(packageJson.files).toContain(packageJson.skillbox.handler.replace(/^\.\//, ""));
  });

  it("returns a forecast matching its output schema", async () => {
    const host = hostWithWeather();

    const execution = await host.executor.execute("@acme/skill-weather@^1", { city: "Lisbon", days: 5 });

    expect(execution.status).toBe("success");
    expect(execution.output.city).toBe("Lisbon");
    expect(execution.output.unit).toBe("celsius");
    expect(execution.output.forecast).toHaveLength(5);
    for (const day of execution.output.forecast) expect(day.low).toBeLessThanOrEqual(day.high);
  });

  it("answers the same input with the same forecast", async () => {
    const host = hostWithWeather();
    const first = await host.executor.execute("@acme/skill-weather", { city: "Oslo" });
    const second = await host.executor.execute("@acme/skill-weather", { city: " oslo " });
    expect(first.output.forecast).toHaveLength(3);
    expect(second.output.forecast).toEqual(first.output.forecast);
  });

  it("converts temperatures to fahrenheit", () => {
    const celsius = forecastWeather({ city: "Cairo", days: 2 });
    const fahrenheit = forecastWeather({ city: "Cairo", days: 2, unit: "fahrenheit" });
    expect(fahrenheit.unit).toBe("fahrenheit");
    expect(fahrenheit.forecast.map((day) => day.high)).toEqual(
      celsius.forecast.map((day) => convertCelsius(day.high, "fahrenheit")),
    );
    expect(convertCelsius(100, "fahrenheit")).toBe(212);
  });

  it("rejects input outside its schema", async () => {
    const host = hostWithWeather();
    const execution = await host.executor.execute("@acme/skill-weather", { city: "Rome", days: 30 });
    expect(execution.error?.code).toBe("INPUT_INVALID");
  });
});

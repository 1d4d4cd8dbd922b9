import { readFileSync } from "node:fs";
import { isDefinedSkill, type SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import echo from "../index.ts";

interface SkillManifest extends Omit<SkillRegistration, "handler"> {
  name: string;
  version: string;
  handler: string;
  examples: { input: unknown; output: unknown }[];
}

const manifest = JSON.parse(readFileSync(new URL("../skill.json", import.meta.url), "utf8")) as SkillManifest;

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with echo registered from its manifest, the way the loader registers a skill folder. */
function hostWithEcho(): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  const { examples: _examples, ...registration } = manifest;
  host.registry.register({ ...registration, handler: "plugin-echo", apiKeyId: "system" });
  host.executor.registerHandler("plugin-echo", echo.handler);
  return host;
}

describe("echo plugin", () => {
  it("default-exports a defined skill", () => {
    expect(isDefinedSkill(echo)).toBe(true);
  });

  it("declares the same schemas in code as in skill.json", () => {
    expect(echo.input).toMatchObject(manifest.input ?? {});
    expect(echo.output).toMatchObject(manifest.output ?? {});
  });

  it("returns the message back", async () => {
    const host = hostWithEcho();
    const execution = await host.executor.execute("echo@^1", { msg: "hi" });
    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({ echoed: "hi" });
  });

  it("produces the outputs its manifest examples promise", async () => {
    const host = hostWithEcho();
    for (const example of manifest.examples) {
      const execution = await host.executor.execute("echo", example.input);
      expect(execution.output).toEqual(example.output);
    }
  });

  it("rejects input without msg, as its manifest schema requires", async () => {
    const host = hostWithEcho();
    const execution = await host.executor.execute("echo", { message: "hi" });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("INPUT_INVALID");
  });
});

import { existsSync } from "node:fs";
import { join } from "node:path";
import { isDefinedSkill } from "@skillbox/core";
import { skillManifestSchema } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import runCode, { createRunCodeSkill } from "../index.ts";
import { CappedOutput } from "../lib/capped-output.ts";
import { MAX_CODE_LENGTH } from "../lib/run-code-schemas.ts";
import { manifest, registerRunCode } from "./run-code-host.js";

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with only the built-in runtimes (inline, worker): no container runtime at all. */
function hostWithoutSandbox(): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  return host;
}

/** Code that leaves a file behind if it ever runs. */
function markerCode(host: TemporaryHost): { code: string; marker: string } {
  const marker = join(host.directory, "ran-on-the-host");
  return {
    marker,
    code: `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");`,
  };
}

describe("run-code plugin", () => {
  it("default-exports a defined skill", () => {
    expect(isDefinedSkill(runCode)).toBe(true);
  });

  it("declares the same schemas in code as in skill.json", () => {
    expect(runCode.input).toEqual(manifest.input);
    expect(runCode.output).toEqual(manifest.output);
  });

  it("ships a valid manifest that runs it in a container without network", () => {
    expect(skillManifestSchema.parse(manifest)).toMatchObject({
      name: "run-code",
      runtime: "container",
      timeoutMs: 30_000,
      sandbox: {
        image: "localhost/skillbox-node:latest",
        memoryMb: 256,
        cpus: 0.5,
        pidsLimit: 64,
        network: false,
      },
    });
  });

  it("refuses to run code in the host process when registered with the inline runtime", async () => {
    const host = hostWithoutSandbox();
    registerRunCode(host, undefined, { runtime: "inline", handler: "plugin-run-code" });
    host.executor.registerHandler("plugin-run-code", runCode.handler);
    const { code, marker } = markerCode(host);

    const execution = await host.executor.execute("run-code", { language: "javascript", code });

    expect(execution).toMatchObject({
      status: "error",
      attempts: 1,
      error: { code: "SANDBOX_UNAVAILABLE", data: { runtime: "inline" } },
    });
    expect(execution.error?.message).toContain('runtime "container"');
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses to run code in a worker thread of the host", async () => {
    const host = hostWithoutSandbox();
    registerRunCode(host, undefined, { runtime: "worker" });
    const { code, marker } = markerCode(host);

    const execution = await host.executor.execute("run-code", { language: "javascript", code });

    expect(execution).toMatchObject({ status: "error", error: { code: "SANDBOX_UNAVAILABLE" } });
    expect(existsSync(marker)).toBe(false);
  });

  it("rejects input its manifest schema refuses, before anything runs", async () => {
    const host = hostWithoutSandbox();
    registerRunCode(host);
    const refused = [
      { language: "ruby", code: "puts 1" },
      { language: "javascript", code: "" },
      { language: "javascript", code: "x".repeat(MAX_CODE_LENGTH + 1) },
      { language: "javascript", code: "1", args: ["a\u0000b"] },
      { language: "javascript", code: "1", args: Array.from({ length: 65 }, () => "a") },
      { language: "javascript", code: "1", timeoutMs: 60_000 },
      { language: "javascript", code: "1", env: { A: "1" } },
    ];
    for (const input of refused) {
      const execution = await host.executor.execute("run-code", input);
      expect(execution.error?.code, JSON.stringify(input).slice(0, 80)).toBe("INPUT_INVALID");
    }
  });
});

describe("createRunCodeSkill", () => {
  it("refuses settings out of range or unknown with CONFIG_INVALID naming the field", () => {
    expect(() => createRunCodeSkill({ maxOutputBytes: 10 * 1024 * 1024 })).toThrow(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringContaining("`maxOutputBytes`"),
      }),
    );
    expect(() => createRunCodeSkill({ defaultTimeoutMs: 0 })).toThrow(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringContaining("`defaultTimeoutMs`"),
      }),
    );
    expect(() => createRunCodeSkill({ timeout: 5 } as never)).toThrow(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringContaining("unknown field `timeout`"),
      }),
    );
  });
});

describe("CappedOutput", () => {
  it("keeps bytes up to its limit and reports the rest as truncated", () => {
    const output = new CappedOutput(5);
    output.push(Buffer.from("abc"));
    expect(output.truncated).toBe(false);
    output.push(Buffer.from("defgh"));
    output.push(Buffer.from("ijk"));

    expect(output.text()).toBe("abcde");
    expect(output.truncated).toBe(true);
  });

  it("leaves out a character the limit cuts in half", () => {
    const output = new CappedOutput(4);
    output.push(Buffer.from("abcé"));

    expect(output.text()).toBe("abc");
  });
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { SandboxRunner } from "@skillbox/sandbox";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createRunCodeHost, manifest, outputOf } from "./run-code-host.js";

/** A getter for the current test's host, set up and torn down around each test. */
export type HostOfTest = () => TemporaryHost;

/**
 * Gives each test of the enclosing suite a host with run-code registered over `runner`, and
 * disposes of it, the runner's sandboxes and `cleanUp`'s leftovers afterwards.
 */
export function useRunCodeHost(runner: SandboxRunner, cleanUp: () => void = () => {}): HostOfTest {
  let host: TemporaryHost | undefined;
  beforeEach(() => {
    host = createRunCodeHost(runner);
  });
  afterEach(async () => {
    // Closing the host closes the container runtime, which kills what it started.
    await host?.dispose();
    host = undefined;
    await runner.killAll();
    cleanUp();
  });
  return () => {
    if (host === undefined) throw new Error("no host: call this inside a test");
    return host;
  };
}

/** Starts a server on 127.0.0.1 that counts its requests. */
async function startCountingServer(): Promise<{ server: Server; port: number; requests: () => number }> {
  let requests = 0;
  const server = createServer((_request, response) => {
    requests += 1;
    response.end("reached");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, requests: () => requests };
}

/**
 * What run-code does in any sandbox, end to end through the executor. `expectNothingLeft`
 * resolves once nothing the runner started (container, process) is left.
 */
export function runCodeBehaviours(hostOfTest: HostOfTest, expectNothingLeft: () => Promise<void>): void {
  it("returns stdout, stderr and a non-zero exit code as a successful execution", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      code: 'console.log("to stdout"); console.error("to stderr"); process.exit(3);',
    });

    expect(outputOf(execution)).toEqual({
      stdout: "to stdout\n",
      stderr: "to stderr\n",
      exitCode: 3,
      signal: null,
      timedOut: false,
      truncated: false,
      durationMs: expect.any(Number),
    });
  });

  it("runs the code as an ES module, with a thrown error as exit code 1 and its stack on stderr", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      code: 'import { platform } from "node:os";\nconsole.log(await Promise.resolve(platform()));\nthrow new Error("boom");',
    });

    const output = outputOf(execution);
    expect(output).toMatchObject({ stdout: "linux\n", exitCode: 1, timedOut: false });
    expect(output.stderr).toContain("Error: boom");
  });

  it("gives the program its stdin and arguments", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      code: [
        'let text = "";',
        "for await (const chunk of process.stdin) text += chunk;",
        "console.log(JSON.stringify({ upper: text.toUpperCase(), args: process.argv.slice(2) }));",
      ].join("\n"),
      stdin: "hello from stdin",
      args: ["--flag", "two words", "ünïcode"],
    });

    expect(JSON.parse(outputOf(execution).stdout)).toEqual({
      upper: "HELLO FROM STDIN",
      args: ["--flag", "two words", "ünïcode"],
    });
  });

  it("runs the example of its manifest", async () => {
    for (const example of manifest.examples) {
      const execution = await hostOfTest().executor.execute("run-code", example.input);
      expect(outputOf(execution)).toMatchObject({ stdout: "42\n", exitCode: 0 });
    }
  });

  it("kills a program that outlives its own timeout and reports timedOut with what it printed", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      code: 'console.log("started"); for (;;) {}',
      timeoutMs: 1_000,
    });

    expect(outputOf(execution)).toMatchObject({
      stdout: "started\n",
      exitCode: null,
      signal: "SIGKILL",
      timedOut: true,
    });
  });

  it("ends with status timeout when the skill's timeout runs out first, and leaves nothing running", async () => {
    const execution = await hostOfTest().executor.execute(
      "run-code",
      { language: "javascript", code: "for (;;) {}", timeoutMs: 20_000 },
      { timeoutMs: 2_000 },
    );

    expect(execution).toMatchObject({ status: "timeout", error: { code: "TIMEOUT" } });
    await expectNothingLeft();
  });

  it("returns when the program exits, even though a process it left behind holds its output open", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      // A new session: out of the program's process group, so only the sandbox's end stops it.
      code: [
        'import { spawn } from "node:child_process";',
        'const options = { detached: true, stdio: ["ignore", "inherit", "inherit"] };',
        'spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], options).unref();',
        'console.log("leaving");',
      ].join("\n"),
      timeoutMs: 20_000,
    });

    expect(outputOf(execution)).toMatchObject({ stdout: "leaving\n", exitCode: 0, timedOut: false });
    // The process left behind ends with its sandbox.
    await expectNothingLeft();
  });

  it("keeps the first 64 KiB of a flood of output, drops the rest and lets the program finish", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      code: 'const line = "x".repeat(1023) + "\\n"; for (let i = 0; i < 8192; i++) process.stdout.write(line); console.error("done");',
    });

    const output = outputOf(execution);
    expect(output).toMatchObject({ exitCode: 0, truncated: true, stderr: "done\n" });
    expect(output.stdout).toHaveLength(64 * 1024);
  });

  it("gives the program no network: a server on the host's loopback is out of reach", async () => {
    const { server, port, requests } = await startCountingServer();
    try {
      // The same fetch from the host reaches the server, so the refusal below is the sandbox's.
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("reached");

      const execution = await hostOfTest().executor.execute("run-code", {
        language: "javascript",
        code: `try { await fetch("http://127.0.0.1:${port}/"); console.log("reached"); } catch (error) { console.log(error.cause?.code ?? error.message); }`,
      });

      const output = outputOf(execution);
      expect(output.exitCode).toBe(0);
      expect(output.stdout).not.toContain("reached");
      expect(output.stdout.trim()).toMatch(/^E[A-Z]+$/);
      expect(requests()).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
}

import { resolve } from "node:path";
import { createSkillHost, type SkillExecution } from "@skillbox/core";
import {
  type CliProject,
  type CliResult,
  createCliProject,
  type RunningCli,
} from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chromiumChildren, isRunning } from "../../../plugins/browser/test/helpers/chromium-processes.ts";
import { type PageServer, startPageServer } from "../../../plugins/browser/test/helpers/page-server.ts";
import { echoFolder, skillFolder } from "./cli-fixtures.js";

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;
/** The repository's built-in plugins, the browser bundle among them. */
const PLUGINS_FOLDER = resolve(import.meta.dirname, "../../../plugins");
/** How long a process gets to exit by itself before the test calls it stuck (it exits in about a second). */
const EXIT_BOUND_MS = 30_000;

/** What the command prints when it has to end a process something still holds open. */
const HELD_OPEN = "skillbox: exiting although something still holds the process";
/** Longer than the 2 s after which `bin/skillbox.mjs` ends a process something holds open. */
const READER_PAUSE_MS = 4_000;

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
});

afterEach(async () => {
  await project.cleanup();
});

/** The process's result once it exited, or a failure naming what it was doing when it did not. */
function exitOf(running: RunningCli, what: string): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${what}: still running after ${EXIT_BOUND_MS} ms\nstdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`,
          ),
        ),
      EXIT_BOUND_MS,
    );
    running.finished().then((result) => {
      clearTimeout(timer);
      resolvePromise(result);
    }, reject);
  });
}

/** Reads the executions the CLI recorded, through a host of our own on its database file. */
async function recordedExecutions(databasePath: string): Promise<SkillExecution[]> {
  const reader = createSkillHost({
    database: databasePath,
    recoverInterrupted: false,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  try {
    return await reader.executor.listExecutions({});
  } finally {
    void reader.close();
  }
}

describe("skillbox serve shutdown", { timeout: 90_000 }, () => {
  it("cancels an idempotent execution still running after the grace period, records it cancelled and exits", async () => {
    project.tree.writeFolder(
      "plugins/hang",
      skillFolder(
        { name: "hang", input: { type: "object" }, timeoutMs: 3_600_000 },
        // Ignores its signal and holds a timer, as an inline handler stuck in real work would.
        "return new Promise((resolve) => setTimeout(resolve, 3_600_000));",
      ),
    );
    const server = project.start(["serve", "--port", "0"], { env: { SKILLBOX_SHUTDOWN_GRACE_MS: "300" } });
    const [, url] = await server.waitForOutput(LISTENING);
    // With an idempotency key the client going away no longer cancels: only the shutdown can.
    const pending = fetch(`${url}/api/skills/hang/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: {}, idempotencyKey: "pinned", timeoutMs: 3_600_000 }),
    }).then(
      async (response) => (await response.json()) as Partial<SkillExecution>,
      (error: unknown) => ({ fetchError: String(error) }),
    );
    for (;;) {
      const response = await fetch(`${url}/api/executions?status=running`);
      const page = (await response.json()) as { executions: unknown[] };
      if (page.executions.length > 0) break;
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    server.child.kill("SIGTERM");
    const stopped = await exitOf(server, "skillbox serve after SIGTERM with an execution hanging");
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/stopped/);
    // The abandoned handler's timer would hold the process: the command ends it once all is closed.
    expect(stopped.stderr).toContain(HELD_OPEN);
    expect(await pending).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    const [execution] = await recordedExecutions(project.databasePath);
    expect(execution).toMatchObject({
      skillName: "hang",
      idempotencyKey: "pinned",
      status: "cancelled",
      error: { code: "CANCELLED", message: expect.stringContaining("the host shut down") },
    });
  });

  it("refuses a malformed SKILLBOX_SHUTDOWN_GRACE_MS with CONFIG_INVALID naming it", async () => {
    const running = project.start(["serve", "--port", "0"], { env: { SKILLBOX_SHUTDOWN_GRACE_MS: "soon" } });
    const result = await exitOf(running, "skillbox serve with a malformed SKILLBOX_SHUTDOWN_GRACE_MS");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /CONFIG_INVALID.*SKILLBOX_SHUTDOWN_GRACE_MS must be a number of milliseconds/,
    );
  });
});

describe("the exit after a command", { timeout: 60_000 }, () => {
  it("never cuts off output a slow reader has not taken yet", async () => {
    project.tree.writeFolder("plugins/echo", echoFolder());
    const message = "x".repeat(1_000_000);
    project.tree.write("big.json", JSON.stringify({ msg: message }));
    const ran = await project.run(["run", "echo", "--input-file", "big.json", "--json"]);
    expect(ran.code).toBe(0);
    const { id } = JSON.parse(ran.stdout) as SkillExecution;

    // Two megabytes of JSON: far more than a pipe holds, so the process is still writing when the
    // command has finished. The reader takes nothing for longer than the force-exit delay.
    const printing = project.start(["executions", id, "--json"]);
    printing.child.stdout?.pause();
    const exitedEarly = await new Promise<boolean>((resolvePromise) => {
      const timer = setTimeout(() => resolvePromise(false), READER_PAUSE_MS);
      printing.child.once("exit", () => {
        clearTimeout(timer);
        resolvePromise(true);
      });
    });
    printing.child.stdout?.resume();
    const result = await exitOf(printing, "skillbox executions <id> with a slow reader");

    expect(exitedEarly).toBe(false);
    expect(result.stderr).not.toContain(HELD_OPEN);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as SkillExecution<{ echoed: string }>;
    expect(printed.input).toEqual({ msg: message });
    expect(printed.output?.echoed).toHaveLength(message.length);
  });
});

describe("processes that ran a browser skill", { timeout: 120_000 }, () => {
  let site: PageServer;

  beforeEach(async () => {
    site = await startPageServer({
      "/": "<!doctype html><title>Hello</title><p>Hello from the page server</p>",
    });
    project.tree.write(
      "skillbox.config.mjs",
      `export default { dirs: [${JSON.stringify(PLUGINS_FOLDER)}] };\n`,
    );
  });

  afterEach(async () => {
    await site.close();
  });

  const browserEnvironment = () => ({
    SKILLBOX_BROWSER_ALLOWED_HOSTS: site.host,
    // The page server is on loopback, which the browser refuses unless allowed explicitly.
    SKILLBOX_BROWSER_ALLOW_PRIVATE: "127.0.0.1",
  });

  it("`skillbox run browser.extract` prints the page and exits by itself with code 0", async () => {
    const running = project.start(
      ["run", "browser.extract", "--input", JSON.stringify({ url: site.url("/") })],
      {
        env: browserEnvironment(),
      },
    );
    const result = await exitOf(running, "skillbox run browser.extract");
    expect(result.code).toBe(0);
    // By itself: not through the command's last-resort exit, which would mean the browser held it.
    expect(result.stderr).not.toContain(HELD_OPEN);
    expect(JSON.parse(result.stdout)).toMatchObject({
      title: "Hello",
      text: expect.stringContaining("Hello from"),
    });
  });

  it("`skillbox serve` exits after SIGTERM once a browser execution ran, its Chromium gone", async () => {
    const server = project.start(["serve", "--port", "0"], { env: browserEnvironment() });
    const [, url] = await server.waitForOutput(LISTENING, 60_000);
    const response = await fetch(`${url}/api/skills/browser.extract/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: { url: site.url("/") } }),
    });
    expect(await response.json()).toMatchObject({ status: "success", output: { title: "Hello" } });
    const browsers = chromiumChildren(server.child.pid as number);
    expect(browsers).toHaveLength(1);
    server.child.kill("SIGTERM");
    const stopped = await exitOf(server, "skillbox serve after SIGTERM, a browser execution done");
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).not.toContain(HELD_OPEN);
    expect(stopped.stdout).toMatch(/stopped/);
    expect(browsers.filter(isRunning)).toEqual([]);
  });
});

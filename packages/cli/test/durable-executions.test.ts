import { spawn, spawnSync } from "node:child_process";
import {
  type CliProject,
  createCliProject,
  type RunningCli,
  SKILLBOX_BIN,
} from "@skillbox/test-helpers/cli-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoFolder, gatedFolder, skillFolder } from "./cli-fixtures.js";

/** util-linux `script` gives a process a pseudo-terminal: the only way to see what a TTY shows. */
const HAS_SCRIPT = spawnSync("script", ["--version"]).status === 0;

// One project for the file: the steps build on each other (submit, then serve, then decide).
let project: CliProject;

beforeAll(() => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
  project.tree.writeFolder(
    "plugins/transfer",
    skillFolder(
      {
        name: "transfer",
        approval: "required",
        input: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
        examples: [{ input: { amount: 1 }, output: { sent: 1 } }],
      },
      "return { sent: input.amount };",
    ),
  );
  // Reports progress, then holds until the test creates the gate file: no timing involved.
  project.tree.writeFolder("plugins/gated", gatedFolder({ progress: true }));
});

afterAll(async () => {
  await project.cleanup();
});

const LISTENING = /listening\s+http:\/\//;

/** Resolves once the process's stderr matches `pattern`. */
function waitForStderr(running: RunningCli, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!pattern.test(running.stderr())) return;
      finish();
      resolve();
    };
    const onExit = () => {
      finish();
      reject(new Error(`exited before printing ${pattern} on stderr:\n${running.stderr()}`));
    };
    const finish = () => {
      running.child.stderr?.off("data", check);
      running.child.off("exit", onExit);
    };
    running.child.stderr?.on("data", check);
    running.child.once("exit", onExit);
    check();
  });
}

async function record(id: string): Promise<Record<string, unknown>> {
  const shown = await project.run(["executions", id, "--json"]);
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as Record<string, unknown>;
}

describe("skillbox run --async / wait / approve / reject / executions --watch", { timeout: 90_000 }, () => {
  let submitted = "";

  it("submits with --async and leaves the execution queued: no one-shot command runs it", async () => {
    const run = await project.run(["run", "echo", "--async", "--input", '{"msg":"later"}']);
    expect(run.code, run.stderr).toBe(0);
    submitted = run.stdout.trim();
    expect(submitted).toMatch(/^\S+$/);

    const waited = await project.run(["wait", submitted, "--timeout", "300"]);
    expect(waited.code).toBe(3);
    expect(waited.stderr).toMatch(/^error WAIT_TIMEOUT: /m);
    // Neither `run` nor `wait` opened a queue: only a serving host runs it.
    expect(await record(submitted)).toMatchObject({ status: "queued" });
  });

  it("has a serving host run it, and wait prints its output as run does", async () => {
    // Serves until the end of the file (cleanup stops it): the later tests decide, it runs.
    const server = project.start(["serve", "--port", "0"]);
    await server.waitForOutput(LISTENING);
    const waited = await project.run(["wait", submitted]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toEqual({ echoed: "later" });
  });

  it("stops run at awaiting_approval; approve in another process, the serving host runs it", async () => {
    const watch = project.start(["executions", "--watch"]);
    await waitForStderr(watch, /^watching executions/m);
    const run = await project.run(["run", "transfer", "--input", '{"amount":5}']);
    expect(run.code).toBe(3);
    const id = run.stdout.trim();
    expect(run.stderr).toContain(`skillbox approve ${id}`);
    expect(await record(id)).toMatchObject({ status: "awaiting_approval", approval: { decision: null } });

    const approved = await project.run(["approve", id, "--by", "alice", "--comment", "fine"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`^approved ${id} \\(transfer@1\\.0\\.0\\)`));

    const waited = await project.run(["wait", id, "--json"]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      status: "success",
      output: { sent: 5 },
      approval: { decision: "approved", decidedBy: "alice", comment: "fine" },
    });

    // The watch printed one line per change of it, up to its end.
    await watch.waitForOutput(new RegExp(`${id}  transfer@1\\.0\\.0  awaiting_approval`));
    await watch.waitForOutput(new RegExp(`${id}  transfer@1\\.0\\.0  success`));
    const stopped = await watch.stop("SIGTERM");
    expect(stopped.code).toBe(0);

    const twice = await project.run(["approve", id]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^error APPROVAL_NOT_PENDING: /m);
  });

  it("keeps a wait without --timeout going until someone decides and the host has run it", async () => {
    const run = await project.run(["run", "transfer", "--input", '{"amount":7}']);
    const id = run.stdout.trim();
    const waiting = project.start(["wait", id]);
    // Two whole other commands later, `wait` is still waiting (nothing but it keeps it alive).
    expect(await record(id)).toMatchObject({ status: "awaiting_approval" });
    expect(await record(id)).toMatchObject({ status: "awaiting_approval" });
    expect(waiting.child.exitCode).toBeNull();
    expect((await project.run(["approve", id])).code).toBe(0);
    const waited = await waiting.finished();
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toEqual({ sent: 7 });
  });

  it("rejects with a reason: wait then fails as run would, exit 1", async () => {
    const run = await project.run(["run", "transfer", "--input", '{"amount":1000}']);
    const id = run.stdout.trim();
    const rejected = await project.run(["reject", id, "--reason", "too much"]);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toBe(`rejected ${id} (transfer@1.0.0)\n`);
    const waited = await project.run(["wait", id]);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(/^error APPROVAL_REJECTED: transfer@1\.0\.0/m);
    expect(await record(id)).toMatchObject({
      status: "rejected",
      approval: { decision: "rejected", comment: "too much" },
    });
  });
});

/** A `skillbox` process on a pseudo-terminal (stdout and stderr both land on its screen). */
function startOnTerminal(args: string[]) {
  const quoted = [process.execPath, SKILLBOX_BIN, ...args].map(
    (word) => `'${word.replaceAll("'", "'\\''")}'`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", SKILLBOX_DB: project.databasePath };
  delete env.SKILLBOX_LOG_LEVEL;
  const child = spawn("script", ["-qfec", quoted.join(" "), "/dev/null"], {
    cwd: project.tree.root,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  child.stdout.on("data", (chunk: Buffer) => {
    screen += chunk.toString();
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  return {
    screen: () => screen,
    closed,
    /** Resolves once the screen matches `pattern`; rejects if the process ends first. */
    showing(pattern: RegExp): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(screen)) return;
          child.stdout.off("data", check);
          resolve();
        };
        child.stdout.on("data", check);
        void closed.then(() => reject(new Error(`ended before showing ${pattern}:\n${screen}`)));
        check();
      });
    },
    kill: () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

describe("skillbox test of a skill that needs approval", { timeout: 30_000 }, () => {
  it("fails its examples with EXAMPLE_NEEDS_APPROVAL and leaves no execution waiting", async () => {
    const tested = await project.run(["test", "transfer", "--json"]);
    expect(tested.code).toBe(1);
    const report = JSON.parse(tested.stdout) as { results: Array<Record<string, unknown>> };
    expect(report.results).toEqual([
      expect.objectContaining({
        passed: false,
        failure: expect.objectContaining({ code: "EXAMPLE_NEEDS_APPROVAL" }),
      }),
    ]);
    expect(await record(report.results[0]?.executionId as string)).toMatchObject({ status: "rejected" });
  });
});

describe("progress on a terminal", { timeout: 60_000 }, () => {
  it.skipIf(!HAS_SCRIPT)("run shows a live progress bar of the skill's reports on stderr", async () => {
    const gate = project.tree.path("run-gate");
    const running = startOnTerminal(["run", "gated", "--input", JSON.stringify({ gate })]);
    try {
      await running.showing(/\[█{5}░{15}\]\s+25% step one/);
      project.tree.write("run-gate", "open");
      expect(await running.closed).toBe(0);
      expect(running.screen()).toMatch(/"done": true/);
    } finally {
      running.kill();
    }
  });

  it.skipIf(!HAS_SCRIPT)("wait shows how the execution the serving host runs is doing", async () => {
    const gate = project.tree.path("wait-gate");
    const run = await project.run(["run", "gated", "--async", "--input", JSON.stringify({ gate })]);
    const id = run.stdout.trim();
    const waiting = startOnTerminal(["wait", id]);
    try {
      // The line shows its status (or its progress bar) once `wait` follows it; then it may end.
      await waiting.showing(new RegExp(`${id} (running|\\[)`));
      project.tree.write("wait-gate", "open");
      expect(await waiting.closed).toBe(0);
      expect(waiting.screen()).toMatch(/"done": true/);
    } finally {
      waiting.kill();
    }
  });

  it.skipIf(!HAS_SCRIPT)("executions --watch redraws the list as executions change", async () => {
    const watching = startOnTerminal(["executions", "--watch"]);
    try {
      await watching.showing(/watching executions \(.+\); Ctrl-C stops/);
      const run = await project.run(["run", "echo", "--async", "--input", '{"msg":"seen"}']);
      const id = run.stdout.trim();
      await watching.showing(new RegExp(`${id}\\s+\\S+ \\S+\\s+echo@1\\.0\\.0\\s+success`));
    } finally {
      watching.kill();
    }
  });
});

import {
  type CliProject,
  createCliProject,
  type RunningCli,
  runRecordingImports,
} from "@skillbox/test-helpers/cli-process";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatedFolder, skillFolder } from "./cli-fixtures.js";

// One PostgreSQL cluster, one Redis and one project for the file: an API host and two workers
// serve the steps in turn, as a three-host deployment would.
let postgres: RunningPostgres;
let redis: RunningRedis;
let project: CliProject;
let databaseUrl = "";
let api: RunningCli;
let apiUrl = "";
const workers: { process: RunningCli; id: string }[] = [];

const READY = /worker (\S+) ready: queues default, concurrency (\d+), (\d+) skill version\(s\)/;
const LISTENING = /listening\s+(http:\/\/\S+)/;

/** Every process of the deployment: the shared record and the queue, from the environment. */
function deployment(): Record<string, string> {
  return { SKILLBOX_DB: databaseUrl, SKILLBOX_QUEUE: redis.url };
}

async function startWorker(extra: string[] = []): Promise<{ process: RunningCli; id: string }> {
  const process = project.start(["worker", ...extra], { env: deployment() });
  const match = await process.waitForOutput(READY, 30_000);
  return { process, id: match[1]! };
}

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
  databaseUrl = postgres.createDatabase("cli_deployment");
  project = createCliProject();
  // Says which process ran it: the API host must never run anything itself.
  project.tree.writeFolder(
    "plugins/whoami",
    skillFolder(
      {
        name: "whoami",
        input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
      },
      "return { echoed: input.msg, pid: process.pid };",
    ),
  );
  // Holds until the test creates the gate file: a run under way at shutdown, without timing.
  project.tree.writeFolder("plugins/gated", gatedFolder());
}, 60_000);

afterAll(async () => {
  for (const worker of workers) await worker.process.stop("SIGKILL");
  if (api !== undefined) await api.stop("SIGKILL");
  await project?.cleanup();
  await Promise.all([postgres?.stop(), redis?.stop()]);
});

describe("a distributed deployment of skillbox processes", { timeout: 60_000 }, () => {
  it("serves HTTP on an API host and runs the execution on a worker", async () => {
    api = project.start(["serve", "--role", "api", "--port", "0", "--no-studio"], { env: deployment() });
    workers.push(await startWorker(), await startWorker(["--concurrency", "4"]));
    apiUrl = (await api.waitForOutput(LISTENING, 30_000))[1]!;
    expect(api.stdout()).toMatch(/database\s+postgres:\/\/postgres@127\.0\.0\.1:\d+\/cli_deployment/);
    expect(api.stdout()).toMatch(/queue\s+redis:\/\/127\.0\.0\.1:\d+ \(prefix skillbox\); role api/);
    expect(workers[1]!.process.stdout()).toMatch(/concurrency 4, 2 skill version\(s\)/);

    // The README's request.
    const response = await fetch(`${apiUrl}/api/skills/whoami/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: { msg: "hi" } }),
    });
    expect(response.status).toBe(200);
    const execution = (await response.json()) as { id: string; status: string; output: { pid: number } };
    expect(execution).toMatchObject({ status: "success", output: { echoed: "hi" } });
    const ranOn = workers.find((worker) => worker.process.child.pid === execution.output.pid);
    expect(ranOn, "a worker process ran it, not the API host").toBeDefined();
    // The worker that ran it logged it.
    await ranOn!.process.waitForOutput(/executed\s+whoami@1\.0\.0 → success/);
  });

  it("runs one-shot commands against the deployment with --db and --queue", async () => {
    const run = await project.run(
      ["run", "whoami", "--input", '{"msg":"from the cli"}', "--db", databaseUrl, "--queue", redis.url],
      { env: { SKILLBOX_DB: undefined } },
    );
    expect(run.code, run.stderr).toBe(0);
    const output = JSON.parse(run.stdout) as { echoed: string; pid: number };
    expect(output.echoed).toBe("from the cli");
    expect(workers.map((worker) => worker.process.child.pid)).toContain(output.pid);

    const listed = await project.run(["executions", "--json", "--db", databaseUrl, "--queue", redis.url]);
    expect(listed.code, listed.stderr).toBe(0);
    const executions = JSON.parse(listed.stdout) as { skillName: string; status: string }[];
    expect(executions.filter((execution) => execution.skillName === "whoami")).toHaveLength(2);
  });

  it("reads a PostgreSQL record without a queue, and refuses to run there, naming --queue", async () => {
    const listed = await project.run(["executions", "--json"], { env: { SKILLBOX_DB: databaseUrl } });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBeGreaterThanOrEqual(2);

    const run = await project.run(["run", "whoami", "--input", '{"msg":"x"}'], {
      env: { SKILLBOX_DB: databaseUrl },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^error CONFIG_INVALID: Running a skill needs the deployment's queue: give --queue/m,
    );
  });

  it("doctor --json lists both workers with their skills' hashes and the queue depth", async () => {
    const doctor = await project.run(["doctor", "--json"], { env: deployment() });
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    const report = JSON.parse(doctor.stdout) as {
      ok: boolean;
      database: { dialect: string; reachable: boolean };
      redis: { maxmemoryPolicy: string };
      queues: { queue: string; waiting: number; active: number; delayed: number }[];
      workers: {
        workerId: string;
        pid: number;
        concurrency: number;
        skills: { name: string; contentHash: string }[];
      }[];
      problems: string[];
    };
    expect(report).toMatchObject({
      ok: true,
      database: { dialect: "postgres", reachable: true },
      problems: [],
    });
    expect(report.redis.maxmemoryPolicy).toBe("noeviction");
    expect(report.queues).toEqual([{ queue: "default", waiting: 0, active: 0, delayed: 0 }]);
    expect(report.workers.map((worker) => worker.workerId).sort()).toEqual(
      workers.map((worker) => worker.id).sort(),
    );
    for (const worker of report.workers) {
      expect(worker.skills.map((skill) => skill.name).sort()).toEqual(["gated", "whoami"]);
      for (const skill of worker.skills) expect(skill.contentHash).toMatch(/^[0-9a-f]{12,}$/);
    }
    // The same code on both: the same hashes.
    const hashes = report.workers.map((worker) =>
      worker.skills
        .map((skill) => skill.contentHash)
        .sort()
        .join(),
    );
    expect(new Set(hashes).size).toBe(1);

    const human = await project.run(["doctor"], { env: deployment() });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/queue\s+default: 0 waiting, 0 active, 0 delayed/);
    for (const worker of workers) expect(human.stdout).toContain(`worker    ${worker.id} on `);
    expect(human.stdout).toMatch(/whoami@1\.0\.0 [0-9a-f]{12}\n/);
  });

  it("cancels from another process a run under way on a worker", async () => {
    const gate = project.tree.path("never-opened");
    const id = await startGatedRun(gate);
    const cancelled = await project.run(["cancel", id, "--reason", "not needed"], { env: deployment() });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    await waitForStatus(id, "cancelled");
    const shown = await project.run(["executions", id, "--json"], { env: deployment() });
    expect(JSON.parse(shown.stdout)).toMatchObject({
      status: "cancelled",
      error: { message: expect.stringContaining("not needed") },
    });
  });

  it("stops a worker on SIGTERM with exit 0, letting its run under way finish", async () => {
    const [first, second] = workers;
    const stopped = await second!.process.stop("SIGTERM");
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/stopped/);

    // Only the first worker is left: it takes the gated run.
    const gate = project.tree.path("gate-open");
    const id = await startGatedRun(gate);
    first!.process.child.kill("SIGTERM");
    await first!.process.waitForOutput(/stopping\s+SIGTERM/);
    project.tree.write("gate-open", "");
    const result = await first!.process.finished();
    expect(result.code, result.stderr).toBe(0);
    const waited = await project.run(["wait", id, "--json"], { env: deployment() });
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: "success", output: { done: true } });

    // Both left the record: the doctor sees no worker.
    const doctor = await project.run(["doctor", "--json"], { env: deployment() });
    expect((JSON.parse(doctor.stdout) as { workers: unknown[] }).workers).toEqual([]);
  });
});

describe("one process in both roles", { timeout: 60_000 }, () => {
  it("serves HTTP and runs the execution itself with the default role, both", async () => {
    const both = project.start(["serve", "--port", "0", "--no-studio"], { env: deployment() });
    await both.waitForOutput(/queue\s+redis:\/\/\S+ \(prefix skillbox\); role both/);
    await both.waitForOutput(READY, 30_000);
    const url = (await both.waitForOutput(LISTENING))[1]!;
    const response = await fetch(`${url}/api/skills/whoami/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: { msg: "both" } }),
    });
    const execution = (await response.json()) as { status: string; output: { pid: number } };
    expect(execution).toMatchObject({ status: "success", output: { echoed: "both", pid: both.child.pid } });
    const stopped = await both.stop("SIGTERM");
    expect(stopped.code, stopped.stderr).toBe(0);
  });
});

describe("refusing what a distributed deployment cannot run on", { timeout: 60_000 }, () => {
  it("exits non-zero from serve, worker and doctor against a Redis that evicts keys", async () => {
    const evicting = await startRedisServer({ maxmemoryPolicy: "allkeys-lru" });
    try {
      const env = { SKILLBOX_DB: databaseUrl, SKILLBOX_QUEUE: evicting.url };
      const serve = await project.run(["serve", "--port", "0"], { env });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toMatch(/^error QUEUE_EVICTING: .*maxmemory-policy allkeys-lru/m);
      const worker = await project.run(["worker"], { env });
      expect(worker.code).toBe(1);
      expect(worker.stderr).toMatch(/^error QUEUE_EVICTING: /m);
      const doctor = await project.run(["doctor", "--json"], { env });
      expect(doctor.code).toBe(1);
      const report = JSON.parse(doctor.stdout) as { ok: boolean; problems: string[] };
      expect(report.ok).toBe(false);
      expect(report.problems.join("\n")).toMatch(/maxmemory-policy allkeys-lru/);
    } finally {
      await evicting.stop();
    }
  });

  it("names the setting and the expected form for a queue that is not a Redis URL, and --role without one", async () => {
    const badQueue = await project.run(["executions"], { env: { SKILLBOX_QUEUE: "localhost:6379" } });
    expect(badQueue.code).toBe(1);
    expect(badQueue.stderr).toMatch(
      /^error CONFIG_INVALID: SKILLBOX_QUEUE must be a URL of the form redis:\/\//m,
    );
    const role = await project.run(["serve", "--role", "api"]);
    expect(role.code).toBe(1);
    expect(role.stderr).toMatch(
      /^error CONFIG_INVALID: --role of skillbox serve needs the deployment's queue: give --queue/m,
    );
    // A database URL is checked as one, and its password never shown.
    const badDatabase = await project.run(["executions", "--db", "postgres://alice:s3cret@[bad/x"]);
    expect(badDatabase.code).toBe(1);
    expect(badDatabase.stderr).toMatch(
      /^error CONFIG_INVALID: --db must be a SQLite file or a URL of the form postgres:\/\//m,
    );
    // A URL that does not parse is not echoed at all: where its password ends cannot be known.
    expect(badDatabase.stderr).toContain("it is not a URL");
    expect(badDatabase.stderr).not.toContain("[bad/x");
    expect(badDatabase.stderr).not.toContain("s3cret");
    const noQueue = await project.run(["worker"]);
    expect(noQueue.code).toBe(1);
    expect(noQueue.stderr).toMatch(/^error CONFIG_INVALID: skillbox worker needs the deployment's queue/m);

    // A toggle would land in a host's in-memory registry and be lost: refused, naming the manifest field.
    const toggle = await project.run([
      "disable",
      "echo",
      "--db",
      "postgres://alice:s3cret@127.0.0.1:1/skillbox",
    ]);
    expect(toggle.code).toBe(1);
    expect(toggle.stderr).toMatch(
      /^error CONFIG_INVALID: `skillbox disable` toggles a skill in a SQLite registry/m,
    );
    expect(toggle.stderr).toContain('"enabled": false');
  });
});

describe("loading the distributed parts", { timeout: 60_000 }, () => {
  it("loads BullMQ and pg only for a command that uses a deployment", async () => {
    const distributedParts = /\/packages\/distributed\/|\/node_modules\/(\.pnpm\/)?(bullmq|pg|ioredis)[@/]/;
    const importsOf = async (args: string[], env: Record<string, string | undefined>) => {
      const { result, imports } = await runRecordingImports(project, args, env);
      expect(result.code, result.stderr).toBe(0);
      return imports.join("\n");
    };
    // The single host (SQLite) of every command, serving ones included in what they import.
    expect(await importsOf(["executions"], {})).not.toMatch(distributedParts);
    expect(await importsOf(["run", "whoami", "--input", '{"msg":"local"}'], {})).not.toMatch(
      distributedParts,
    );
    expect(await importsOf(["executions"], { SKILLBOX_DB: databaseUrl })).toMatch(distributedParts);
  });
});

/** Submits a run of `gated` held until `gate` exists; resolves with its id once a worker runs it. */
async function startGatedRun(gate: string): Promise<string> {
  const submitted = await project.run(["run", "gated", "--async", "--input", JSON.stringify({ gate })], {
    env: deployment(),
  });
  expect(submitted.code, submitted.stderr).toBe(0);
  const id = submitted.stdout.trim();
  await waitForStatus(id, "running");
  return id;
}

/** Polls the shared record until the execution has `status`. */
async function waitForStatus(id: string, status: string): Promise<void> {
  for (;;) {
    const shown = await project.run(["executions", id, "--json"], { env: deployment() });
    expect(shown.code, shown.stderr).toBe(0);
    if ((JSON.parse(shown.stdout) as { status: string }).status === status) return;
  }
}

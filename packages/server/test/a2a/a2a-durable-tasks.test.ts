import { rmSync } from "node:fs";
import { join } from "node:path";
import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { createSkillHost, type SkillContext, type SkillHost } from "@skillbox/core";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpApp, type RunningHttpServer, startHttpServer } from "../../src/index.js";
import { createA2aClient, messageRequest, testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

const getTask = (id: string) => ({ tenant: "", id });
const cancelTask = (id: string) => ({ tenant: "", id, metadata: undefined });

/** Progress steps the test has seen: the handler reports the next one only after. */
class SeenSteps {
  private readonly waiters = new Map<number, () => void>();
  private readonly seen = new Set<number>();

  see(step: number): void {
    this.seen.add(step);
    this.waiters.get(step)?.();
  }

  reached(step: number): Promise<void> {
    if (this.seen.has(step)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(step, resolve));
  }
}

/** The `steps` skill: reports `steps` progress steps, each once the test saw the one before. */
function registerSteps(host: SkillHost, seen: SeenSteps): void {
  host.executor.registerHandler("steps", async (input: { steps: number }, context: SkillContext) => {
    for (let step = 1; step <= input.steps; step++) {
      context.progress({ progress: step, total: input.steps, message: `step ${step} of ${input.steps}` });
      await seen.reached(step);
    }
    return { echoed: `${input.steps} steps` };
  });
  host.registry.register(
    testSkill({
      name: "steps",
      handler: "steps",
      input: { type: "object", properties: { steps: { type: "number" } }, required: ["steps"] },
    }),
  );
}

/** `echo` behind an approval: its executions wait at `awaiting_approval`. */
const guardedSkill = () => testSkill({ name: "guarded", approval: "required" });

function asTask(result: unknown): Task {
  expect(result).toHaveProperty("status");
  return result as Task;
}

function statusText(task: Task): string {
  const part = task.status?.message?.parts[0]?.content;
  return part?.$case === "text" ? part.value : "";
}

/** Reads a stream to its end, telling `seen` about each progress step as it arrives. */
async function readStream(
  stream: AsyncGenerator<StreamResponse>,
  seen?: SeenSteps,
): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) {
    events.push(event);
    const payload = event.payload;
    if (payload?.$case === "statusUpdate") {
      const progress = payload.value.metadata?.progress as { progress?: number } | undefined;
      if (progress?.progress !== undefined) seen?.see(progress.progress);
    }
  }
  return events;
}

function stateOf(event: StreamResponse | undefined): TaskState | undefined {
  const payload = event?.payload;
  if (payload?.$case === "task") return payload.value.status?.state;
  if (payload?.$case === "statusUpdate") return payload.value.status?.state;
  return undefined;
}

describe("createHttpApp: A2A tasks are executions", () => {
  it("streams progress as status-update events and ends message/stream with the completed task", async () => {
    const running = await startServer();
    const seen = new SeenSteps();
    registerSteps(running.host, seen);
    const client = await running.client();

    const events = await readStream(
      client.sendMessageStream(messageRequest([{ data: { steps: 3 } }], { skill: "steps" })),
      seen,
    );

    const first = events[0]?.payload;
    expect(first?.$case).toBe("task");
    const taskId = first?.$case === "task" ? first.value.id : "";
    // The task is the execution.
    expect(await running.host.executor.getExecution(taskId)).toMatchObject({
      status: "success",
      skillName: "steps",
    });
    // The working updates; the final one repeats the latest progress in its metadata.
    const progress = events.flatMap((event) =>
      event.payload?.$case === "statusUpdate" &&
      event.payload.value.status?.state === TaskState.TASK_STATE_WORKING &&
      event.payload.value.metadata?.progress !== undefined
        ? [event.payload.value]
        : [],
    );
    expect(progress.map((update) => update.metadata?.progress)).toMatchObject([
      { progress: 1, total: 3, message: "step 1 of 3" },
      { progress: 2, total: 3, message: "step 2 of 3" },
      { progress: 3, total: 3, message: "step 3 of 3" },
    ]);
    const text = progress[1]?.status?.message?.parts[0]?.content;
    expect(text).toEqual({ $case: "text", value: "step 2 of 3" });
    const artifact = events.find((event) => event.payload?.$case === "artifactUpdate")?.payload;
    expect(artifact?.$case === "artifactUpdate" && artifact.value.artifact?.parts[0]?.content).toEqual({
      $case: "data",
      value: { echoed: "3 steps" },
    });
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("answers a skill that needs approval with input-required; approved, the task completes", async () => {
    const running = await startServer();
    running.host.registry.register(guardedSkill());
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "go" } }], { skill: "guarded" })),
    );

    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(task.metadata).toMatchObject({
      executionId: task.id,
      executionStatus: "awaiting_approval",
      approval: { decision: null },
    });
    expect(statusText(task)).toMatch(/^Awaiting approval: /);
    expect(statusText(task)).toContain(`/api/executions/${task.id}/approve`);
    expect((await client.getTask(getTask(task.id))).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    await running.host.executor.approve(task.id, { by: "operator" });
    await running.host.executor.wait(task.id);

    const done = await client.getTask(getTask(task.id));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { echoed: "go" } });
    expect(done.metadata).toMatchObject({ approval: { decision: "approved", decidedBy: "operator" } });
  });

  it("ends the task rejected when the approver rejects it", async () => {
    const running = await startServer();
    running.host.registry.register(guardedSkill());
    const client = await running.client();
    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "no" } }], { skill: "guarded" })),
    );

    await running.host.executor.reject(task.id, { by: "operator", reason: "not this one" });

    const rejected = await client.getTask(getTask(task.id));
    expect(rejected.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(rejected.metadata).toMatchObject({
      executionStatus: "rejected",
      error: { code: "APPROVAL_REJECTED" },
    });
  });

  it("follows a task waiting for approval with tasks/resubscribe until it completes", async () => {
    const running = await startServer();
    running.host.registry.register(guardedSkill());
    const client = await running.client();
    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "later" } }], { skill: "guarded" })),
    );

    const stream = client.resubscribeTask({ tenant: "", id: task.id });
    const first = await stream.next();
    expect(stateOf(first.value as StreamResponse)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await running.host.executor.approve(task.id, { by: "operator" });
    const rest = await readStream(stream);

    expect(stateOf(rest.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(rest.some((event) => event.payload?.$case === "artifactUpdate")).toBe(true);
  });

  it("cancels a task waiting for approval: the task is canceled and the execution cancelled", async () => {
    const running = await startServer();
    running.host.registry.register(guardedSkill());
    const client = await running.client();
    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "x" } }], { skill: "guarded" })),
    );

    const cancelled = await client.cancelTask(cancelTask(task.id));

    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await running.host.executor.getExecution(task.id))?.status).toBe("cancelled");
    await expect(client.cancelTask(cancelTask(task.id))).resolves.toMatchObject({
      status: { state: TaskState.TASK_STATE_CANCELED },
    });
  });
});

describe("createHttpApp: A2A tasks after a restart", () => {
  const directories: string[] = [];
  const opened: { host: SkillHost; server: RunningHttpServer }[] = [];
  afterEach(async () => {
    for (const { host, server } of opened.splice(0)) {
      await server.close();
      await host.close();
    }
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  /** A host and server over `database`, with the `echo` handler. */
  async function open(
    database: string,
  ): Promise<{ host: SkillHost; server: RunningHttpServer; client: Client }> {
    const host = createSkillHost({ database, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
    const app = createHttpApp({ registry: host.registry, executor: host.executor });
    const server = await startHttpServer({ fetch: app.fetch, port: 0, apiKeysConfigured: false });
    const entry = { host, server };
    opened.push(entry);
    return { ...entry, client: await createA2aClient(server.url) };
  }

  async function close(entry: { host: SkillHost; server: RunningHttpServer }): Promise<void> {
    opened.splice(
      opened.findIndex((candidate) => candidate.host === entry.host),
      1,
    );
    await entry.server.close();
    await entry.host.close();
  }

  it("finds its tasks on the next host over the same database, which cancels or completes them", async () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    const database = join(directory, "skillbox.db");
    const first = await open(database);
    first.host.registry.registerMany([testSkill({ name: "echo" }), guardedSkill()]);
    const send = async (client: Client, skill: string, msg: string) =>
      asTask(await client.sendMessage(messageRequest([{ data: { msg } }], { skill })));
    const done = await send(first.client, "echo", "before");
    const waiting = await send(first.client, "guarded", "approve me");
    const abandoned = await send(first.client, "guarded", "cancel me");
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await close(first);

    const second = await open(database);

    const kept = await second.client.getTask(getTask(done.id));
    expect(kept.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(kept.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { echoed: "before" } });
    expect((await second.client.getTask(getTask(waiting.id))).status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    );
    const cancelled = await second.client.cancelTask(cancelTask(abandoned.id));
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await second.host.executor.getExecution(abandoned.id))?.status).toBe("cancelled");

    await second.host.executor.approve(waiting.id, { by: "operator" });
    await second.host.executor.wait(waiting.id);
    const approved = await second.client.getTask(getTask(waiting.id));
    expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(approved.artifacts[0]?.parts[0]?.content).toEqual({
      $case: "data",
      value: { echoed: "approve me" },
    });

    const listed = await second.client.listTasks({
      tenant: "",
      contextId: "",
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((task) => task.id).sort()).toEqual([done.id, waiting.id, abandoned.id].sort());
  });
});

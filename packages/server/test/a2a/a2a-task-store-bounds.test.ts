import { type Task, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { describe, expect, it } from "vitest";
import { BoundedTaskStore } from "../../src/index.js";
import { type A2aTestServer, messageRequest, testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

const KIB = 1024;
const MIB = 1024 * KIB;
const getTask = (id: string) => ({ tenant: "", id });

/** A server with the skill `big`: `{ bytes }` in, `{ text }` of that many characters out. */
async function startBigServer(options: Parameters<typeof startServer>[0] = {}): Promise<A2aTestServer> {
  const running = await startServer(options);
  running.host.executor.registerHandler("big", (input: { bytes: number }) => ({
    text: "o".repeat(input.bytes),
  }));
  running.host.registry.register(
    testSkill({
      name: "big",
      handler: "big",
      input: { type: "object", properties: { bytes: { type: "number" }, pad: { type: "string" } } },
      output: { type: "object", properties: { text: { type: "string" } } },
    }),
  );
  return running;
}

async function sendBig(client: Client, input: Record<string, unknown>): Promise<Task> {
  const task = (await client.sendMessage(messageRequest([{ data: input }], { skill: "big" }))) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  return task;
}

describe("createHttpApp: the A2A task store holds bounded bytes", () => {
  it("keeps the bytes of many ~1 MiB tasks within maxTaskBytes; an evicted task is not found", async () => {
    const taskStore = new BoundedTaskStore({ maxTaskBytes: 4 * MIB });
    const running = await startBigServer({ a2a: { taskStore } });
    const client = await running.client();

    const sent: Task[] = [];
    for (let index = 0; index < 16; index++) {
      sent.push(await sendBig(client, { bytes: 900 * KIB }));
      expect(taskStore.retainedBytes).toBeLessThanOrEqual(4 * MIB);
    }

    // 900 KiB tasks fit one task's 1 MiB whole, so the 4 MiB budget holds four of them.
    expect(taskStore.size).toBe(4);
    expect(taskStore.retainedBytes).toBeGreaterThan(3 * 900 * KIB);
    await expect(client.getTask(getTask(sent[0]!.id))).rejects.toMatchObject({ name: "TaskNotFoundError" });
    const newest = await client.getTask(getTask(sent.at(-1)!.id));
    expect(newest.artifacts[0]?.parts[0]?.content).toMatchObject({
      $case: "data",
      value: { text: expect.any(String) },
    });
  }, 60_000);

  it("keeps a task over maxBytesPerTask with its state and metadata, its output a reference to the execution", async () => {
    const taskStore = new BoundedTaskStore();
    const running = await startBigServer({ a2a: { taskStore } });
    const client = await running.client();

    const sent = await sendBig(client, { bytes: 2 * MIB });
    // The blocking answer still carries the whole output; only the kept copy is cut.
    const answered = sent.artifacts[0]?.parts[0]?.content;
    expect(answered?.$case === "data" && (answered.value as { text: string }).text.length).toBe(2 * MIB);

    const task = await client.getTask(getTask(sent.id));
    const executionId = task.metadata?.executionId as string;
    expect(executionId).toEqual(expect.any(String));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(Buffer.byteLength(JSON.stringify(task))).toBeLessThanOrEqual(MIB);
    expect(taskStore.retainedBytes).toBeLessThanOrEqual(MIB);
    const part = task.artifacts[0]?.parts[0];
    expect(part?.content).toMatchObject({
      $case: "text",
      value: expect.stringContaining(`GET /api/executions/${executionId}`),
    });
    expect(part?.metadata).toMatchObject({
      omitted: { holds: "output", executionId, location: `/api/executions/${executionId}` },
    });
    // The small input stays as sent.
    expect(task.history[0]?.parts[0]?.content).toEqual({ $case: "data", value: { bytes: 2 * MIB } });

    const execution = await running.call("GET", `/api/executions/${executionId}`);
    expect(execution.status).toBe(200);
    expect(execution.body.output.text).toHaveLength(2 * MIB);
  }, 60_000);

  it("does not keep a big input of a finished task: it becomes a reference too", async () => {
    const taskStore = new BoundedTaskStore();
    const running = await startBigServer({ a2a: { taskStore }, maxBodyBytes: 4 * MIB });
    const client = await running.client();

    const sent = await sendBig(client, { bytes: 10, pad: "i".repeat(2 * MIB) });

    const task = await client.getTask(getTask(sent.id));
    expect(Buffer.byteLength(JSON.stringify(task))).toBeLessThanOrEqual(MIB);
    expect(task.history[0]?.parts[0]?.metadata).toMatchObject({
      omitted: { holds: "input", executionId: task.metadata?.executionId },
    });
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { text: "o".repeat(10) } });
  }, 60_000);

  it("keeps another owner's finished tasks while one owner floods the store", async () => {
    const taskStore = new BoundedTaskStore({ maxTaskBytes: 4 * MIB });
    const running = await startBigServer({
      apiKeys: { "alice-key": "alice", "bob-key": "bob" },
      a2a: { taskStore },
    });
    const alice = await running.client({ key: "alice-key" });
    const bob = await running.client({ key: "bob-key" });

    const kept = [await sendBig(alice, { bytes: 900 * KIB }), await sendBig(alice, { bytes: 10 })];
    const flood: Task[] = [];
    for (let index = 0; index < 12; index++) flood.push(await sendBig(bob, { bytes: 900 * KIB }));

    expect(taskStore.retainedBytes).toBeLessThanOrEqual(4 * MIB);
    for (const task of kept) expect((await alice.getTask(getTask(task.id))).id).toBe(task.id);
    await expect(bob.getTask(getTask(flood[0]!.id))).rejects.toMatchObject({ name: "TaskNotFoundError" });
    expect((await bob.getTask(getTask(flood.at(-1)!.id))).id).toBe(flood.at(-1)!.id);
  }, 60_000);
});

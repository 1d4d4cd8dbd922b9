import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { type Task, TaskState } from "@a2a-js/sdk";
import type { SkillExecution } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { messageRequest, testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

const getTask = (id: string) => ({ tenant: "", id });
const cancelTask = (id: string) => ({ tenant: "", id, metadata: undefined });

describe("createHttpApp: A2A tasks/get and tasks/cancel", () => {
  it("tasks/get returns the finished task with its artifact", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await running.client();
    const sent = (await client.sendMessage(
      messageRequest([{ data: { msg: "kept" } }], { skill: "echo" }),
    )) as Task;

    const task = await client.getTask(getTask(sent.id));

    expect(task.id).toBe(sent.id);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { echoed: "kept" } });
    expect(task.history[0]?.parts[0]?.content).toEqual({ $case: "data", value: { msg: "kept" } });
  });

  it("tasks/get answers task-not-found for another owner's task", async () => {
    const running = await startServer({ apiKeys: { "alice-key": "alice", "bob-key": "bob" } });
    running.host.registry.register(testSkill({ name: "echo" }));
    const alice = await running.client({ key: "alice-key" });
    const bob = await running.client({ key: "bob-key" });
    const sent = (await alice.sendMessage(
      messageRequest([{ data: { msg: "mine" } }], { skill: "echo" }),
    )) as Task;

    await expect(bob.getTask(getTask(sent.id))).rejects.toMatchObject({ name: "TaskNotFoundError" });
    await expect(bob.cancelTask(cancelTask(sent.id))).rejects.toMatchObject({ name: "TaskNotFoundError" });
    expect((await alice.getTask(getTask(sent.id))).id).toBe(sent.id);
  });

  it("tasks/cancel aborts a running skill: the task ends canceled and the execution cancelled", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "slow", handler: "slow", input: { type: "object" } }));
    const client = await running.client({ config: { polling: true } });
    const sent = (await client.sendMessage(messageRequest([{ data: {} }], { skill: "slow" }))) as Task;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(sent.status?.state);

    const cancelled = await client.cancelTask(cancelTask(sent.id));

    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(cancelled.metadata).toMatchObject({ executionStatus: "cancelled", error: { code: "CANCELLED" } });
    const execution = await running.host.executor.getExecution(cancelled.metadata?.executionId as string);
    expect(execution?.status).toBe("cancelled");
    expect((await client.getTask(getTask(sent.id))).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it("tasks/cancel of a finished task answers task-not-cancelable", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await running.client();
    const sent = (await client.sendMessage(
      messageRequest([{ data: { msg: "done" } }], { skill: "echo" }),
    )) as Task;

    await expect(client.cancelTask(cancelTask(sent.id))).rejects.toMatchObject({
      name: "TaskNotCancelableError",
    });
  });

  it("cancels the execution of a blocking message/send whose client goes away", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "slow", handler: "slow", input: { type: "object" } }));
    const started = once(running.host.executor, "started");
    const finished = once(running.host.executor, "finished") as Promise<[SkillExecution]>;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: { messageId: "m1", role: "ROLE_USER", parts: [{ data: {} }], metadata: { skill: "slow" } },
      },
    });
    const request = httpRequest(`${running.server.url}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
    });
    request.on("error", () => {});
    request.end(body);
    await started;

    // The client hangs up: its connection closes.
    request.destroy();
    const [execution] = await finished;

    expect(execution.status).toBe("cancelled");
  });

  it("keeps a non-blocking message/send running when its client goes away", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "slow", handler: "slow", input: { type: "object" } }));
    const poller = await running.client({ config: { polling: true } });
    const sent = (await poller.sendMessage(messageRequest([{ data: {} }], { skill: "slow" }))) as Task;
    const disconnected = await running.client();
    const finished = once(running.host.executor, "finished") as Promise<[SkillExecution]>;

    // The polling client's connection is gone; a fresh client still finds the task running.
    const fetched = await disconnected.getTask(getTask(sent.id));
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(fetched.status?.state);
    const cancelled = await disconnected.cancelTask(cancelTask(sent.id));

    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await finished)[0].status).toBe("cancelled");
  });
});

import { randomUUID } from "node:crypto";
import { ListTasksRequest, SendMessageRequest, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import type { SkillContext } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OwnerUser } from "../../src/a2a/owner-user.js";
import { createA2aRequestHandler } from "../../src/index.js";
import { testSkill } from "./a2a-test-server.js";

let host: TemporaryHost;

beforeEach(() => {
  host = createTemporaryHost();
  host.executor.registerHandler("count", (input: { to: number }, context: SkillContext) => {
    for (let step = 1; step <= input.to; step++) context.progress({ progress: step, total: input.to });
    return { echoed: `counted to ${input.to}` };
  });
  host.registry.register(
    testSkill({
      name: "count",
      handler: "count",
      input: { type: "object", properties: { to: { type: "number" } }, required: ["to"] },
    }),
  );
});

afterEach(async () => {
  vi.restoreAllMocks();
  await host.dispose();
});

function streamRequest(): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: "ROLE_USER",
      parts: [{ data: { to: 5 } }],
      metadata: { skill: "count" },
    },
  });
}

function stateOf(event: StreamResponse | undefined): TaskState | undefined {
  const payload = event?.payload;
  if (payload?.$case === "task") return payload.value.status?.state;
  if (payload?.$case === "statusUpdate") return payload.value.status?.state;
  return undefined;
}

describe("ExecutionTaskStore (the default task store)", () => {
  it("lets a stream read slower than the execution runs without the SDK refusing its events", async () => {
    const warnings: unknown[][] = [];
    // The SDK's result manager says so on the console when an event trails a final task it loaded.
    vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => {
      warnings.push(args);
    });
    const handler = createA2aRequestHandler({ registry: host.registry, executor: host.executor });
    const context = new ServerCallContext({ user: new OwnerUser("public", false) });
    const stream = handler.sendMessageStream(streamRequest(), context);

    // The reader takes the first event, then lets the execution finish before reading on.
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === "task" ? first.value.payload.value.id : "";
    expect((await host.executor.wait(taskId)).status).toBe("success");
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);

    expect(stateOf(rest.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(warnings).toEqual([]);
    const stored = await handler.getTask({ tenant: "", id: taskId, historyLength: undefined }, context);
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("answers tasks/get from the database once a stream's reader left before the task settled", async () => {
    const handler = createA2aRequestHandler({ registry: host.registry, executor: host.executor });
    const context = new ServerCallContext({ user: new OwnerUser("public", false) });
    const stream = handler.sendMessageStream(streamRequest(), context);

    // The reader takes the first event and goes away; the execution goes on without it.
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === "task" ? first.value.payload.value.id : "";
    await stream.return(undefined);
    expect((await host.executor.wait(taskId)).status).toBe("success");

    const task = await handler.getTask({ tenant: "", id: taskId, historyLength: undefined }, context);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({
      $case: "data",
      value: { echoed: "counted to 5" },
    });
  });

  it("answers tasks/get from the database for another request's context, owner-scoped", async () => {
    const handler = createA2aRequestHandler({ registry: host.registry, executor: host.executor });
    const alice = new ServerCallContext({ user: new OwnerUser("public", false) });
    const bob = new ServerCallContext({ user: new OwnerUser("bob", true) });
    const sent = await handler.sendMessage(streamRequest(), alice);
    const id = "id" in sent ? sent.id : "";

    const task = await handler.getTask({ tenant: "", id, historyLength: undefined }, alice);

    expect(task.metadata).toMatchObject({ executionId: id, executionStatus: "success" });
    await expect(handler.getTask({ tenant: "", id, historyLength: undefined }, bob)).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
  });

  it("pages tasks/list through the executions, with and without a statusTimestampAfter filter", async () => {
    const handler = createA2aRequestHandler({ registry: host.registry, executor: host.executor });
    const context = new ServerCallContext({ user: new OwnerUser("public", false) });
    for (let sent = 0; sent < 5; sent++) await handler.sendMessage(streamRequest(), context);
    const newestFirst = (await host.executor.listExecutions({ owner: "public", limit: 10 })).map(
      (entry) => entry.id,
    );

    const pagesOf = async (filter: Record<string, unknown>) => {
      const pages: string[][] = [];
      let pageToken = "";
      do {
        const page = await handler.listTasks(
          ListTasksRequest.fromJSON({ ...filter, pageSize: 2, pageToken }),
          context,
        );
        pages.push(page.tasks.map((task) => task.id));
        pageToken = page.nextPageToken;
      } while (pageToken !== "" && pages.length < 10);
      return pages;
    };

    const expected = [newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)];
    expect(newestFirst).toHaveLength(5);
    expect(await pagesOf({})).toEqual(expected);
    expect(await pagesOf({ statusTimestampAfter: "2000-01-01T00:00:00.000Z" })).toEqual(expected);
  });
});

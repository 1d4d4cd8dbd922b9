import { ListTasksRequest, type Task, TaskState } from "@a2a-js/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { describe, expect, it } from "vitest";
import { OwnerUser } from "../../src/a2a/owner-user.js";
import { BoundedTaskStore } from "../../src/index.js";

const alice = new ServerCallContext({ user: new OwnerUser("alice", true) });
const bob = new ServerCallContext({ user: new OwnerUser("bob", true) });

function task(id: string, state: TaskState, timestamp = "2030-01-01T00:00:00.000Z", contextId = "c1"): Task {
  return {
    id,
    contextId,
    status: { state, message: undefined, timestamp },
    artifacts: [],
    history: [],
    metadata: {},
  };
}

/** `source` with an output artifact of `bytes` characters, named after the task as the executor names it. */
function withOutput(source: Task, bytes: number): Task {
  source.metadata = { executionId: source.id };
  source.artifacts = [
    {
      artifactId: source.id,
      name: "output",
      description: "",
      parts: [
        {
          content: { $case: "data", value: { text: "o".repeat(bytes) } },
          metadata: undefined,
          filename: "",
          mediaType: "",
        },
      ],
      metadata: { executionId: source.id },
      extensions: [],
    },
  ];
  return source;
}

describe("BoundedTaskStore", () => {
  it("keeps each owner's tasks to that owner", async () => {
    const store = new BoundedTaskStore();
    await store.save(task("t1", TaskState.TASK_STATE_COMPLETED), alice);

    expect(await store.load("t1", alice)).toMatchObject({ id: "t1" });
    expect(await store.load("t1", bob)).toBeUndefined();
  });

  it("returns copies: changing a loaded task does not change the stored one", async () => {
    const store = new BoundedTaskStore();
    await store.save(task("t1", TaskState.TASK_STATE_WORKING), alice);

    const loaded = await store.load("t1", alice);
    loaded!.contextId = "changed";

    expect((await store.load("t1", alice))?.contextId).toBe("c1");
  });

  it("forgets, beyond maxTasks, the oldest finished task of the owner holding the most, never a running one", async () => {
    const store = new BoundedTaskStore({ maxTasks: 3 });
    await store.save(task("running", TaskState.TASK_STATE_WORKING), alice);
    await store.save(task("old", TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task("bobs", TaskState.TASK_STATE_FAILED), bob);
    await store.save(task("new", TaskState.TASK_STATE_CANCELED), alice);
    await store.save(task("newest", TaskState.TASK_STATE_COMPLETED), alice);

    expect(store.size).toBe(3);
    expect(await store.load("running", alice)).toBeDefined();
    expect(await store.load("old", alice)).toBeUndefined();
    expect(await store.load("new", alice)).toBeUndefined();
    expect(await store.load("bobs", bob)).toBeDefined();
    expect(await store.load("newest", alice)).toBeDefined();
  });

  it("among owners holding as much, forgets the oldest finished task", async () => {
    const store = new BoundedTaskStore({ maxTasks: 2 });
    await store.save(task("a1", TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task("b1", TaskState.TASK_STATE_COMPLETED), bob);
    await store.save(task("a2", TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task("b2", TaskState.TASK_STATE_COMPLETED), bob);

    expect(await store.load("a1", alice)).toBeUndefined();
    expect(await store.load("b1", bob)).toBeUndefined();
    expect(await store.load("a2", alice)).toBeDefined();
    expect(await store.load("b2", bob)).toBeDefined();
  });

  it("counts serialised bytes, forgets finished tasks over maxTaskBytes, never running ones", async () => {
    const store = new BoundedTaskStore({ maxTaskBytes: 300 * 1024, maxBytesPerTask: 150 * 1024 });
    const running = withOutput(task("running", TaskState.TASK_STATE_WORKING), 400 * 1024);
    await store.save(running, alice);
    expect(store.retainedBytes).toBe(Buffer.byteLength(JSON.stringify(running)));

    await store.save(withOutput(task("done", TaskState.TASK_STATE_COMPLETED), 100 * 1024), alice);

    // The running task alone is over the budget: it stays, the finished one goes.
    expect(await store.load("running", alice)).toBeDefined();
    expect(await store.load("done", alice)).toBeUndefined();
    expect(store.size).toBe(1);

    await store.save(withOutput(task("running", TaskState.TASK_STATE_COMPLETED), 400 * 1024), alice);
    const finished = await store.load("running", alice);
    expect(store.retainedBytes).toBe(Buffer.byteLength(JSON.stringify(finished)));
    expect(store.retainedBytes).toBeLessThanOrEqual(150 * 1024);
    expect(finished?.artifacts[0]?.parts[0]?.metadata).toMatchObject({
      omitted: { holds: "output", executionId: "running" },
    });
  });

  it("counts an update as recent use", async () => {
    const store = new BoundedTaskStore(2);
    await store.save(task("a", TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task("b", TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task("a", TaskState.TASK_STATE_COMPLETED), alice);
    await store.save(task("c", TaskState.TASK_STATE_COMPLETED), alice);

    expect(await store.load("a", alice)).toBeDefined();
    expect(await store.load("b", alice)).toBeUndefined();
  });

  it("lists the caller's tasks newest first, filtered and paged", async () => {
    const store = new BoundedTaskStore();
    await store.save(task("t1", TaskState.TASK_STATE_COMPLETED, "2030-01-01T00:00:01.000Z"), alice);
    await store.save(task("t2", TaskState.TASK_STATE_FAILED, "2030-01-01T00:00:02.000Z"), alice);
    await store.save(task("t3", TaskState.TASK_STATE_COMPLETED, "2030-01-01T00:00:03.000Z", "c2"), alice);
    await store.save(task("t4", TaskState.TASK_STATE_COMPLETED, "2030-01-01T00:00:04.000Z"), bob);

    const first = await store.list(ListTasksRequest.fromJSON({ pageSize: 2 }), alice);
    const second = await store.list(
      ListTasksRequest.fromJSON({ pageSize: 2, pageToken: first.nextPageToken }),
      alice,
    );
    const completed = await store.list(ListTasksRequest.fromJSON({ status: "TASK_STATE_COMPLETED" }), alice);
    const inContext = await store.list(ListTasksRequest.fromJSON({ contextId: "c2" }), alice);

    expect(first.tasks.map((entry) => entry.id)).toEqual(["t3", "t2"]);
    expect(first.totalSize).toBe(3);
    expect(second.tasks.map((entry) => entry.id)).toEqual(["t1"]);
    expect(second.nextPageToken).toBe("");
    expect(completed.tasks.map((entry) => entry.id)).toEqual(["t3", "t1"]);
    expect(inContext.tasks.map((entry) => entry.id)).toEqual(["t3"]);
  });

  it("ends a page of big tasks before 1 MiB, with a token for the rest", async () => {
    const store = new BoundedTaskStore();
    const output = { text: "o".repeat(400 * 1024) };
    for (let index = 0; index < 6; index++) {
      const big = task(`t${index}`, TaskState.TASK_STATE_COMPLETED, `2030-01-01T00:00:0${index}.000Z`);
      big.artifacts = [
        {
          artifactId: `t${index}`,
          name: "output",
          description: "",
          parts: [
            { content: { $case: "data", value: output }, metadata: undefined, filename: "", mediaType: "" },
          ],
          metadata: undefined,
          extensions: [],
        },
      ];
      await store.save(big, alice);
    }

    const seen: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await store.list(
        ListTasksRequest.fromJSON({ pageSize: 100, includeArtifacts: true, pageToken }),
        alice,
      );
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThan(1024 * 1024);
      expect(page.tasks.every((entry) => entry.artifacts.length === 1)).toBe(true);
      seen.push(...page.tasks.map((entry) => entry.id));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken !== "");

    expect(pages).toBe(3);
    expect(seen).toEqual(["t5", "t4", "t3", "t2", "t1", "t0"]);
  });

  it("refuses a maxTasks below 1, and a maxBytesPerTask over maxTaskBytes", () => {
    expect(() => new BoundedTaskStore(0)).toThrow(/maxTasks/);
    expect(() => new BoundedTaskStore({ maxTaskBytes: 1024, maxBytesPerTask: 2048 })).toThrow(
      /maxBytesPerTask \(2048\) must not exceed maxTaskBytes \(1024\)/,
    );
  });
});

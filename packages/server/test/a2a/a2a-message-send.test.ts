import { type Task, TaskState } from "@a2a-js/sdk";
import { defineInterceptor, deny } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { messageRequest, testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

function asTask(result: unknown): Task {
  expect(result).toHaveProperty("status");
  return result as Task;
}

function statusText(task: Task): string {
  const part = task.status?.message?.parts[0]?.content;
  return part?.$case === "text" ? part.value : "";
}

describe("createHttpApp: A2A message/send", () => {
  it("runs the skill named in metadata.skill and answers a completed task with the output artifact", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "hi" } }], { skill: "echo" })),
    );

    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toHaveLength(1);
    const part = task.artifacts[0]?.parts[0];
    expect(part?.content).toEqual({ $case: "data", value: { echoed: "hi" } });
    expect(part?.mediaType).toBe("application/json");
    const executionId = task.metadata?.executionId as string;
    expect(task.metadata).toMatchObject({ skill: "echo", skillVersion: "1.0.0", executionStatus: "success" });
    expect(task.artifacts[0]?.metadata).toEqual({ executionId });
    const execution = await running.host.executor.getExecution(executionId);
    expect(execution).toMatchObject({ status: "success", apiKeyId: "public", sessionId: task.contextId });
    expect(execution?.input).toEqual({ msg: "hi" });
  });

  it("resolves a version range given as name@range", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo", version: "1.2.0" }));
    running.host.registry.register(testSkill({ name: "echo", version: "2.0.0" }));
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "v1" } }], { skill: "echo@^1" })),
    );

    expect(task.metadata).toMatchObject({ skill: "echo", skillVersion: "1.2.0" });
  });

  it("takes a single data part {skill, input} as the skill and its input", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { skill: "echo", input: { msg: "x" } } }])),
    );

    expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { echoed: "x" } });
  });

  it("reads text holding a JSON object as the input, and other text as { text }", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    running.host.registry.register(
      testSkill({
        name: "echo-text",
        handler: "echo-text",
        input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      }),
    );
    running.host.executor.registerHandler("echo-text", (input: { text: string }) => ({ echoed: input.text }));
    const client = await running.client();

    const json = asTask(
      await client.sendMessage(messageRequest([{ text: '{"msg": "from json"}' }], { skill: "echo" })),
    );
    const plain = asTask(
      await client.sendMessage(messageRequest([{ text: "plain words" }], { skill: "echo-text" })),
    );

    expect(json.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { echoed: "from json" } });
    expect(plain.artifacts[0]?.parts[0]?.content).toEqual({
      $case: "data",
      value: { echoed: "plain words" },
    });
  });

  it("answers a failed task with the error code and message when the skill throws", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "broken", handler: "fail" }));
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "x" } }], { skill: "broken" })),
    );

    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(statusText(task)).toMatch(/^HANDLER_ERROR: .*the test skill failed on purpose$/);
    expect(task.metadata).toMatchObject({
      executionStatus: "error",
      error: { code: "HANDLER_ERROR", message: expect.stringContaining("the test skill failed on purpose") },
    });
    expect(task.artifacts).toEqual([]);
    expect((await running.host.executor.getExecution(task.metadata?.executionId as string))?.status).toBe(
      "error",
    );
  });

  it("answers a failed task with INPUT_INVALID when the input breaks the skill's schema", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { message: "x" } }], { skill: "echo" })),
    );

    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(statusText(task)).toMatch(/^INPUT_INVALID: /);
  });

  it("answers a failed task naming the skill when no visible skill has that name", async () => {
    const running = await startServer();
    const client = await running.client();

    const task = asTask(await client.sendMessage(messageRequest([{ data: {} }], { skill: "nowhere" })));

    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(statusText(task)).toMatch(/^SKILL_NOT_FOUND: .*"nowhere"/);
    expect(task.metadata).toMatchObject({ error: { code: "SKILL_NOT_FOUND" } });
    expect(await running.host.executor.countExecutions()).toBe(0);
  });

  it("answers a rejected task when an interceptor denies the execution", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    running.host.executor.use(
      defineInterceptor({
        name: "deny-everything",
        before() {
          throw deny("not today");
        },
      }),
    );
    const client = await running.client();

    const task = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "x" } }], { skill: "echo" })),
    );

    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusText(task)).toBe("DENIED: not today");
    expect(task.metadata).toMatchObject({ executionStatus: "denied" });
  });

  it("refuses, as invalid params, a message that does not say which skill to run", async () => {
    const running = await startServer();
    const client = await running.client();

    const sending = client.sendMessage(messageRequest([{ text: "hello there" }]));

    await expect(sending).rejects.toMatchObject({
      name: "RequestMalformedError",
      message: expect.stringContaining("message.metadata.skill"),
    });
    expect(await running.host.executor.countExecutions()).toBe(0);
  });

  it("refuses file parts and several data parts", async () => {
    const running = await startServer();
    const client = await running.client();

    const file = client.sendMessage(
      messageRequest([{ url: "https://example.com/a.txt" }], { skill: "echo" }),
    );
    const twoData = client.sendMessage(
      messageRequest([{ data: { a: 1 } }, { data: { b: 2 } }], { skill: "echo" }),
    );

    await expect(file).rejects.toThrow(/file parts are not supported/);
    await expect(twoData).rejects.toThrow(/2 data parts/);
  });

  it("refuses a message that continues an existing task", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await running.client();
    const first = asTask(
      await client.sendMessage(messageRequest([{ data: { msg: "1" } }], { skill: "echo" })),
    );

    const followUp = client.sendMessage(
      messageRequest(
        [{ data: { msg: "2" } }],
        { skill: "echo" },
        { taskId: first.id, contextId: first.contextId },
      ),
    );

    await expect(followUp).rejects.toThrow(/send it without taskId/);
    expect(await running.host.executor.countExecutions()).toBe(1);
  });

  it("needs an API key when the server has keys, and runs the skill as the key's owner", async () => {
    const running = await startServer({ apiKeys: { "alice-key": "alice" } });
    running.host.registry.register(testSkill({ name: "private-echo", apiKeyId: "alice" }));

    const anonymous = await running.client();
    const alice = await running.client({ key: "alice-key" });
    const task = asTask(
      await alice.sendMessage(messageRequest([{ data: { msg: "a" } }], { skill: "private-echo" })),
    );

    await expect(
      anonymous.sendMessage(messageRequest([{ data: {} }], { skill: "private-echo" })),
    ).rejects.toThrow(/401[\s\S]*AUTH_REQUIRED/);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await running.host.executor.getExecution(task.metadata?.executionId as string))?.apiKeyId).toBe(
      "alice",
    );
  });
});

import { once } from "node:events";
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { createSkillHost } from "@skillbox/core";
import { describe, expect, it, vi } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

describe("createHttpApp: POST /api/skills/:name/execute", () => {
  it("runs the skill as the caller and answers with the recorded execution", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());

    const { status, body } = await api.call("POST", "/api/skills/echo/execute", {
      key: "alice-key",
      json: { input: { msg: "hello" }, sessionId: "session-1" },
    });

    expect(status).toBe(200);
    expect(body).toMatchObject({
      skillName: "echo",
      skillVersion: "1.0.0",
      apiKeyId: "alice",
      sessionId: "session-1",
      input: { msg: "hello" },
      output: { echoed: "hello" },
      status: "success",
      error: null,
      attempts: 1,
    });
    expect(await api.host.executor.getExecution(body.id)).toMatchObject({
      status: "success",
      apiKeyId: "alice",
    });
  });

  it("resolves `version` as a semver range", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ version: "1.2.0" }));
    api.host.registry.register(echoSkill({ version: "2.0.0" }));

    const ranged = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "x" }, version: "^1.0.0" },
    });
    const latest = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" } } });
    const unmatched = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "x" }, version: "^3" },
    });

    expect(ranged.body.skillVersion).toBe("1.2.0");
    expect(latest.body.skillVersion).toBe("2.0.0");
    expect(unmatched.status).toBe(404);
    expect(unmatched.body.error).toMatchObject({
      code: "SKILL_NOT_FOUND",
      data: { available: ["2.0.0", "1.2.0"] },
    });
  });

  it("is 400 SKILL_REFERENCE_INVALID for a `version` that is not a semver range", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ version: "1.2.0" }));

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "x" }, version: "one-point-two" },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("SKILL_REFERENCE_INVALID");
    expect(response.body.error.message).toContain("one-point-two");
  });

  it("runs scoped names, URL-encoded or as two segments", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ name: "@acme/weather" }));

    const encoded = await api.call("POST", "/api/skills/%40acme%2Fweather/execute", {
      json: { input: { msg: "a" } },
    });
    const segments = await api.call("POST", "/api/skills/@acme/weather/execute", {
      json: { input: { msg: "b" } },
    });

    expect(encoded.status).toBe(200);
    expect(encoded.body).toMatchObject({ skillName: "@acme/weather", output: { echoed: "a" } });
    expect(segments.status).toBe(200);
    expect(segments.body).toMatchObject({ skillName: "@acme/weather", output: { echoed: "b" } });
  });

  it("is 422 INPUT_INVALID for input the schema rejects, with the recorded execution's id", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const { status, body } = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: 42 } },
    });

    expect(status).toBe(422);
    expect(body.error.code).toBe("INPUT_INVALID");
    expect(body.error.message).toContain("msg");
    const recorded = await api.host.executor.getExecution(body.error.data.executionId);
    expect(recorded).toMatchObject({ status: "error", error: { code: "INPUT_INVALID" } });
    expect(body.error.data.violations).toEqual(recorded?.error?.data);
  });

  it("answers a failed handler with 200 and the record, whose status says what happened", async () => {
    const api = await startApi();
    api.host.executor.registerHandler("broken", () => {
      throw new Error("the disk is full");
    });
    api.host.registry.register(echoSkill({ name: "broken", handler: "broken", retry: { maxAttempts: 1 } }));

    const { status, body } = await api.call("POST", "/api/skills/broken/execute", {
      json: { input: { msg: "x" } },
    });

    expect(status).toBe(200);
    expect(body.status).toBe("error");
    expect(body.error).toMatchObject({ code: "HANDLER_ERROR" });
    expect(body.error.message).toContain("the disk is full");
  });

  it("passes timeoutMs to the executor (a slow handler ends `timeout`)", async () => {
    const api = await startApi();
    api.host.executor.registerHandler("slow", (_input, context) =>
      sleep(10_000, undefined, { signal: context.signal }),
    );
    api.host.registry.register(echoSkill({ name: "slow", handler: "slow", retry: { maxAttempts: 1 } }));

    const { status, body } = await api.call("POST", "/api/skills/slow/execute", {
      json: { input: { msg: "x" }, timeoutMs: 50 },
    });

    expect(status).toBe(200);
    expect(body.status).toBe("timeout");
  });

  it("is 404 SKILL_NOT_FOUND for an unknown skill and for another owner's", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill({ name: "bob-notes", apiKeyId: "bob" }));

    const unknown = await api.call("POST", "/api/skills/nothing/execute", {
      key: "alice-key",
      json: { input: {} },
    });
    const foreign = await api.call("POST", "/api/skills/bob-notes/execute", {
      key: "alice-key",
      json: { input: { msg: "x" } },
    });
    const withRange = await api.call("POST", "/api/skills/echo@1.0.0/execute", {
      key: "alice-key",
      json: {},
    });

    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("SKILL_NOT_FOUND");
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("SKILL_NOT_FOUND");
    expect(withRange.status).toBe(404);
    expect(withRange.body.error.message).toContain('"version"');
  });

  it("is 409 SKILL_DISABLED for a disabled skill", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ enabled: false }));

    const { status, body } = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "x" } },
    });

    expect(status).toBe(409);
    expect(body.error.code).toBe("SKILL_DISABLED");
  });

  it("runs once per idempotency key and owner; the key on another skill is 409", async () => {
    const api = await startApi({ apiKeys: KEYS });
    let runs = 0;
    api.host.executor.registerHandler("counted", (input: { msg: string }) => {
      runs++;
      return { echoed: input.msg };
    });
    api.host.registry.register(echoSkill({ name: "counted", handler: "counted" }));
    api.host.registry.register(echoSkill());
    const json = { input: { msg: "once" }, idempotencyKey: "order-42" };

    const first = await api.call("POST", "/api/skills/counted/execute", { key: "alice-key", json });
    const second = await api.call("POST", "/api/skills/counted/execute", { key: "alice-key", json });
    const otherOwner = await api.call("POST", "/api/skills/counted/execute", { key: "bob-key", json });
    const otherSkill = await api.call("POST", "/api/skills/echo/execute", { key: "alice-key", json });

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(otherOwner.body.id).not.toBe(first.body.id);
    expect(runs).toBe(2);
    expect(otherSkill.status).toBe(409);
    expect(otherSkill.body.error).toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
      data: { executionId: first.body.id },
    });
  });

  it("is 409 IDEMPOTENCY_CONFLICT for the same key with another input, without running it", async () => {
    const api = await startApi({ apiKeys: KEYS });
    let runs = 0;
    api.host.executor.registerHandler("counted", (input: { msg: string }) => {
      runs++;
      return { echoed: input.msg };
    });
    api.host.registry.register(echoSkill({ name: "counted", handler: "counted" }));

    const first = await api.call("POST", "/api/skills/counted/execute", {
      key: "alice-key",
      json: { input: { msg: "pay 10" }, idempotencyKey: "order-43" },
    });
    const changed = await api.call("POST", "/api/skills/counted/execute", {
      key: "alice-key",
      json: { input: { msg: "pay 99" }, idempotencyKey: "order-43" },
    });

    expect(first.status).toBe(200);
    expect(changed.status).toBe(409);
    expect(changed.body.error).toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
      data: { executionId: first.body.id },
    });
    expect(changed.body.error.message).toContain('"order-43"');
    expect(runs).toBe(1);
  });

  it("stops a repeat's wait for another host's execution when the repeat's client goes away", async () => {
    const api = await startApi();
    const other = createSkillHost({
      database: api.host.databasePath,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    other.executor.registerHandler("held", async () => {
      started();
      await released;
      return { echoed: "held" };
    });
    api.host.registry.register(echoSkill({ name: "held", handler: "held" }));
    const json = { input: { msg: "x" }, idempotencyKey: "order-44" };
    try {
      const first = other.executor.execute("held", json.input, { idempotencyKey: json.idempotencyKey });
      await handlerStarted;
      // Calls through: it only tells when the route handed the repeat to the executor.
      const execute = vi.spyOn(api.host.executor, "execute");
      const repeat = post(api.server.url, "/api/skills/held/execute");
      repeat.on("error", () => {});
      repeat.end(JSON.stringify(json));
      await vi.waitFor(() => expect(execute).toHaveBeenCalled(), { timeout: 10_000, interval: 10 });
      const waiting = execute.mock.results[0]!.value as Promise<unknown>;
      repeat.destroy();

      const error = await waiting.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toMatchObject({ code: "CANCELLED" });
      release();
      expect((await first).status).toBe("success");
    } finally {
      release();
      await other.close();
    }
  });

  it("cancels the execution when the client goes away", async () => {
    const api = await startApi();
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    api.host.executor.registerHandler("waits", (_input, context) => {
      started();
      return sleep(10_000, undefined, { signal: context.signal });
    });
    api.host.registry.register(echoSkill({ name: "waits", handler: "waits", retry: { maxAttempts: 1 } }));
    const finished = once(api.host.executor, "finished");

    const request = post(api.server.url, "/api/skills/waits/execute");
    request.on("error", () => {});
    request.end(JSON.stringify({ input: { msg: "x" } }));
    await handlerStarted;
    request.destroy();

    const [execution] = await finished;
    expect(execution).toMatchObject({ skillName: "waits", status: "cancelled" });
  });
});

describe("createHttpApp: execute request bodies", () => {
  it("refuses malformed JSON and an empty body (400 REQUEST_INVALID)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    const headers = { "content-type": "application/json" };

    const malformed = await api.call("POST", "/api/skills/echo/execute", { headers, body: '{"input": ' });
    const empty = await api.call("POST", "/api/skills/echo/execute", { headers, body: "" });
    const array = await api.call("POST", "/api/skills/echo/execute", { json: [1, 2] });

    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("REQUEST_INVALID");
    expect(malformed.body.error.message).toContain("not valid JSON");
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain("empty");
    expect(array.status).toBe(400);
    expect(array.body.error.message).toContain("must be a JSON object");
  });

  it("names the field that fails validation (400)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const wrongType = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "x" }, timeoutMs: "soon" },
    });
    const unknownField = await api.call("POST", "/api/skills/echo/execute", { json: { msg: "x" } });

    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain("`timeoutMs` must be a number of milliseconds");
    expect(wrongType.body.error.data.issues[0].path).toEqual(["timeoutMs"]);
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.message).toContain("unknown field `msg`");
  });

  it("says an over-long idempotencyKey or sessionId is too long, naming the field and the limit (400)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    for (const field of ["idempotencyKey", "sessionId"]) {
      const tooLong = await api.call("POST", "/api/skills/echo/execute", {
        json: { input: { msg: "x" }, [field]: "k".repeat(201) },
      });
      const wrongType = await api.call("POST", "/api/skills/echo/execute", {
        json: { input: { msg: "x" }, [field]: 42 },
      });

      expect(tooLong.status).toBe(400);
      expect(tooLong.body.error.code).toBe("REQUEST_INVALID");
      expect(tooLong.body.error.message).toContain(`\`${field}\` must be at most 200 characters, got 201`);
      expect(wrongType.body.error.message).toContain(`\`${field}\` must be a string`);
    }
    expect(await api.host.executor.countExecutions()).toBe(0);
  });

  it("refuses a body that is not sent as JSON (415), so web pages cannot post forms to it", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const text = await api.call("POST", "/api/skills/echo/execute", {
      body: JSON.stringify({ input: { msg: "x" } }),
    });
    const vendorJson = await api.call("POST", "/api/skills/echo/execute", {
      headers: { "content-type": "application/vnd.skillbox+json; charset=utf-8" },
      body: JSON.stringify({ input: { msg: "x" } }),
    });

    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe("CONTENT_TYPE_INVALID");
    expect(text.body.error.message).toContain("Content-Type: application/json");
    expect(vendorJson.status).toBe(200);
    expect(await api.host.executor.countExecutions()).toBe(1);
  });

  it("refuses a body over maxBodyBytes (413), by Content-Length and when streamed", async () => {
    const api = await startApi({ maxBodyBytes: 1024 });
    api.host.registry.register(echoSkill());
    const json = { input: { msg: "x".repeat(2000) } };
    const encoded = new TextEncoder().encode(JSON.stringify(json));

    const declared = await api.call("POST", "/api/skills/echo/execute", { json });
    const streamed = await api.call("POST", "/api/skills/echo/execute", {
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(encoded.slice(0, 600));
          controller.enqueue(encoded.slice(600));
          controller.close();
        },
      }),
    });
    const small = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "fits" } } });

    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatchObject({ code: "BODY_TOO_LARGE", data: { maxBytes: 1024 } });
    expect(streamed.status).toBe(413);
    expect(streamed.body.error.code).toBe("BODY_TOO_LARGE");
    expect(small.status).toBe(200);
    expect(await api.host.executor.countExecutions()).toBe(1);
  });

  it("accepts a streamed (chunked) body under the limit", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    // node:http sends a body without Content-Length as Transfer-Encoding: chunked.
    const request = post(api.server.url, "/api/skills/echo/execute");
    request.write('{"input": {"msg": ');
    request.end('"chunked"}}');
    const [response] = (await once(request, "response")) as [IncomingMessage];
    let text = "";
    for await (const chunk of response) text += chunk;

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ status: "success", output: { echoed: "chunked" } });
  });
});

/** A raw node:http POST with a JSON content type, for what fetch cannot do: chunked bodies, hanging up. */
function post(baseUrl: string, path: string): ClientRequest {
  const { hostname, port } = new URL(baseUrl);
  return httpRequest({
    hostname,
    port,
    method: "POST",
    path,
    agent: false,
    headers: { "content-type": "application/json" },
  });
}

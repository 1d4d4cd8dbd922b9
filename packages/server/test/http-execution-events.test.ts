import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { EventStreamReader, type ServerSentEvent } from "./http-event-stream-reader.js";
import { registerGuardedSkill, registerSlowSkill } from "./http-gated-skill.js";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "alice-approver": "alice+approver", "bob-key": "bob" };

async function submitSlow(api: TestApi, key?: string): Promise<string> {
  const { body } = await api.call("POST", "/api/skills/slow/execute", {
    key,
    json: { input: {} },
    headers: { prefer: "respond-async" },
  });
  return body.id;
}

function openEvents(
  api: TestApi,
  id: string,
  options: { key?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  return fetch(`${api.server.url}/api/executions/${id}/events`, { headers });
}

describe("createHttpApp: GET /api/executions/:id/events", () => {
  it("streams the current status, progress and status changes, then the final record, then closes", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const slow = registerSlowSkill(api);
    const id = await submitSlow(api, "alice-key");

    const response = await openEvents(api, id, { key: "alice-key" });
    const events = new EventStreamReader(response);
    const first = await events.next();
    slow.first.open();
    const progress = await events.until("progress");
    slow.second.open();
    const finished = await events.until("finished");

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(first).toMatchObject({ event: "status", data: { type: "status", executionId: id } });
    expect(["queued", "running"]).toContain(first?.data.status);
    expect(progress.event.data).toMatchObject({
      executionId: id,
      progress: { progress: 1, total: 2, message: "halfway" },
    });
    expect(finished.event.id).toBe("finished");
    expect(finished.event.data.execution).toMatchObject({ id, status: "success", output: { done: true } });
    expect(finished.event.data.execution.error).toBeNull();
    const statuses = [first, ...progress.skipped, ...finished.skipped]
      .filter((event) => event?.event === "status")
      .map((event) => event?.data.status);
    // In the order they happened: each status event's place in the life of an execution only grows.
    const places = statuses.map((status) => ["queued", "running", "success"].indexOf(status));
    expect(places.every((place) => place >= 0)).toBe(true);
    expect(places).toEqual([...places].sort((left, right) => left - right));
    expect(await events.ended()).toBe(true);
  });

  it("answers an execution already finished with one finished event", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    const { body } = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "done" } } });

    const events = new EventStreamReader(await openEvents(api, body.id));

    expect(await events.next()).toMatchObject({
      event: "finished",
      data: { execution: { id: body.id, status: "success", output: { echoed: "done" } } },
    });
    expect(await events.ended()).toBe(true);
  });

  it("tells EventSource to stop (204) when it reconnects after the finished event", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    const { body } = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "done" } } });

    const response = await openEvents(api, body.id, { headers: { "last-event-id": "finished" } });

    expect(response.status).toBe(204);
  });

  it("streams an approval: the wait at awaiting_approval, then the run after the approver's decision", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const { body } = await api.call("POST", "/api/skills/guarded/execute", {
      key: "alice-key",
      json: { input: { msg: "ok?" } },
    });

    const events = new EventStreamReader(await openEvents(api, body.id, { key: "alice-key" }));
    const first = await events.next();
    await api.call("POST", `/api/executions/${body.id}/approve`, { key: "alice-approver", json: {} });
    const finished = await events.until("finished");

    expect(first).toMatchObject({ event: "status", data: { status: "awaiting_approval" } });
    expect(first?.data.execution.approval).toMatchObject({ decision: null });
    expect(finished.event.data.execution).toMatchObject({ status: "success", output: { echoed: "ok?" } });
  });

  it("ends with the cancelled record when the execution is cancelled mid-stream", async () => {
    const api = await startApi();
    const slow = registerSlowSkill(api);
    const id = await submitSlow(api);

    const events = new EventStreamReader(await openEvents(api, id));
    await events.next();
    await api.call("POST", `/api/executions/${id}/cancel`, { json: { reason: "enough" } });
    const finished = await events.until("finished");
    slow.first.open();
    slow.second.open();

    expect(finished.event.data.execution.status).toBe("cancelled");
  });

  it("ends an open stream when the executor closes, saying why, so a server can shut down", async () => {
    const api = await startApi();
    registerGuardedSkill(api);
    const { body } = await api.call("POST", "/api/skills/guarded/execute", { json: { input: { msg: "x" } } });

    const events = new EventStreamReader(await openEvents(api, body.id));
    const first = await events.next();
    const closing = api.host.close();
    const rest: (ServerSentEvent | undefined)[] = [];
    for (let event = await events.next(); event !== undefined; event = await events.next()) rest.push(event);
    await closing;

    expect(first?.data.status).toBe("awaiting_approval");
    expect(rest.filter((event) => event?.comment === undefined).map((event) => event?.event)).toEqual([
      "stream-error",
    ]);
    expect(rest.at(-1)?.data.error.code).toBe("BUSY");
  });

  it("answers another owner's stream with 404 in the API's error shape", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const slow = registerSlowSkill(api);
    const id = await submitSlow(api, "alice-key");

    const response = await openEvents(api, id, { key: "bob-key" });
    slow.first.open();
    slow.second.open();

    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("EXECUTION_NOT_FOUND");
  });

  it("sends heartbeat comments while nothing happens", async () => {
    const api = await startApi({ executionEvents: { heartbeatIntervalMs: 10 } });
    const slow = registerSlowSkill(api);
    const id = await submitSlow(api);

    const events = new EventStreamReader(await openEvents(api, id));
    await events.next();
    const heartbeat = await events.next();
    slow.first.open();
    slow.second.open();
    await events.until("finished");

    expect(heartbeat).toEqual({ comment: "heartbeat" });
  });

  it("caps the streams one owner has open (429 RATE_LIMITED); a closed one frees its place", async () => {
    const api = await startApi({ apiKeys: KEYS, executionEvents: { maxStreamsPerOwner: 1 } });
    const slow = registerSlowSkill(api);
    const id = await submitSlow(api, "alice-key");

    const events = new EventStreamReader(await openEvents(api, id, { key: "alice-key" }));
    await events.next();
    const second = await openEvents(api, id, { key: "alice-key" });
    const bob = await openEvents(api, id, { key: "bob-key" });
    slow.first.open();
    slow.second.open();
    await events.until("finished");
    expect(await events.ended()).toBe(true);
    const third = new EventStreamReader(await openEvents(api, id, { key: "alice-key" }));

    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    expect(bob.status).toBe(404);
    await bob.body?.cancel();
    expect((await third.next())?.event).toBe("finished");
  });

  it("ends the subscription when the client goes away, and the execution goes on", async () => {
    // No heartbeat during the test: a failed heartbeat write would also end an abandoned stream.
    const api = await startApi({ executionEvents: { maxStreamsPerOwner: 1, heartbeatIntervalMs: 600_000 } });
    const slow = registerSlowSkill(api);
    const id = await submitSlow(api);

    const events = new EventStreamReader(await openEvents(api, id));
    await events.next();
    await events.cancel();
    // The one place is free again once the server has ended the first stream; until it has
    // noticed the client left, a new stream is refused.
    let again: Response;
    for (;;) {
      again = await openEvents(api, id);
      if (again.status !== 429) break;
      await again.body?.cancel();
      await sleep(10);
    }
    const second = new EventStreamReader(again);
    const first = await second.next();
    slow.first.open();
    slow.second.open();
    const finished = await second.until("finished");

    expect(again.status).toBe(200);
    expect(first?.event).toBe("status");
    expect(finished.event.data.execution.status).toBe("success");
  });
});

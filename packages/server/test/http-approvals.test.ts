import { describe, expect, it } from "vitest";
import { createHttpApp } from "../src/index.js";
import { registerGuardedSkill, registerSlowSkill } from "./http-gated-skill.js";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = {
  "alice-key": "alice",
  "alice-approver": "alice+approver",
  "bob-key": "bob",
  "bob-approver": "bob+approver",
};

/** Runs `guarded` as alice's plain key: the execution stops awaiting approval. */
async function awaitingExecution(api: TestApi, msg = "please"): Promise<string> {
  const response = await api.call("POST", "/api/skills/guarded/execute", {
    key: "alice-key",
    json: { input: { msg } },
  });
  expect(response.body.status).toBe("awaiting_approval");
  return response.body.id;
}

describe("createHttpApp: POST /api/executions/:id/approve and /reject", () => {
  it("lets the owner's approver key approve; the execution then runs, recording who approved", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const approved = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: { comment: "looks fine" },
    });
    const finished = await api.call("GET", `/api/executions/${id}?wait=30`, { key: "alice-key" });

    expect(approved.status).toBe(200);
    expect(approved.body.approval).toMatchObject({
      decision: "approved",
      decidedBy: "alice",
      comment: "looks fine",
    });
    expect(finished.body).toMatchObject({ status: "success", output: { echoed: "please" } });
    expect(finished.body.approval).toMatchObject({
      decision: "approved",
      decidedBy: "alice",
      inputEdited: false,
    });
  });

  it("runs an approval's edited input", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: { input: { msg: "edited" } },
    });
    const finished = await api.call("GET", `/api/executions/${id}?wait=30`, { key: "alice-key" });

    expect(finished.body).toMatchObject({ status: "success", output: { echoed: "edited" } });
    expect(finished.body.approval.inputEdited).toBe(true);
  });

  it("refuses edited input that fails the schema, naming the field, and changes nothing", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const refused = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: { input: { msg: 42 } },
    });
    const after = await api.call("GET", `/api/executions/${id}`, { key: "alice-key" });

    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("INPUT_INVALID");
    expect(refused.body.error.message).toContain("msg");
    expect(after.body).toMatchObject({ status: "awaiting_approval", input: { msg: "please" } });
    expect(after.body.approval.decision).toBeNull();
  });

  it("refuses a key without the approver role (403), before looking the execution up", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const own = await api.call("POST", `/api/executions/${id}/approve`, { key: "alice-key", json: {} });
    const missing = await api.call("POST", "/api/executions/no-such-id/reject", {
      key: "alice-key",
      json: {},
    });
    const after = await api.call("GET", `/api/executions/${id}`, { key: "alice-key" });

    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("FORBIDDEN");
    expect(own.body.error.message).toContain("alice+approver");
    expect(missing.status).toBe(403);
    expect(after.body.status).toBe("awaiting_approval");
  });

  it("answers 404 to another owner's approver, changing nothing", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const approve = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "bob-approver",
      json: {},
    });
    const reject = await api.call("POST", `/api/executions/${id}/reject`, { key: "bob-approver", json: {} });
    const after = await api.call("GET", `/api/executions/${id}`, { key: "alice-key" });

    expect(approve.status).toBe(404);
    expect(approve.body.error.code).toBe("EXECUTION_NOT_FOUND");
    expect(reject.status).toBe(404);
    expect(after.body.status).toBe("awaiting_approval");
  });

  it("refuses a second decision with 409 APPROVAL_NOT_PENDING", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const first = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: {},
    });
    const again = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: {},
    });
    const reject = await api.call("POST", `/api/executions/${id}/reject`, {
      key: "alice-approver",
      json: {},
    });

    expect(first.status).toBe(200);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("APPROVAL_NOT_PENDING");
    expect(reject.status).toBe(409);
    expect(reject.body.error.code).toBe("APPROVAL_NOT_PENDING");
  });

  it("rejects with a reason: the execution ends rejected and can no longer be approved", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const rejected = await api.call("POST", `/api/executions/${id}/reject`, {
      key: "alice-approver",
      json: { reason: "not today" },
    });
    const approve = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: {},
    });

    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: "rejected", error: { code: "APPROVAL_REJECTED" } });
    expect(rejected.body.approval).toMatchObject({
      decision: "rejected",
      decidedBy: "alice",
      comment: "not today",
    });
    expect(approve.status).toBe(409);
  });

  it("refuses to approve a finished execution that never asked (409)", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    const { body } = await api.call("POST", "/api/skills/echo/execute", {
      key: "alice-key",
      json: { input: { msg: "x" } },
    });

    const approve = await api.call("POST", `/api/executions/${body.id}/approve`, {
      key: "alice-approver",
      json: {},
    });

    expect(approve.status).toBe(409);
    expect(approve.body.error.code).toBe("APPROVAL_NOT_PENDING");
  });

  it("refuses to approve an expired approval (409), which has ended rejected", async () => {
    const api = await startApi({ apiKeys: KEYS }, { approvalTimeoutMs: 1 });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const ended = await api.host.executor.wait(id);
    const approve = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: {},
    });

    expect(ended).toMatchObject({ status: "rejected", error: { code: "APPROVAL_EXPIRED" } });
    expect(approve.status).toBe(409);
    expect(["APPROVAL_EXPIRED", "APPROVAL_NOT_PENDING"]).toContain(approve.body.error.code);
  });

  it("takes who decided from the key, never from the body", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const response = await api.call("POST", `/api/executions/${id}/approve`, {
      key: "alice-approver",
      json: { by: "mallory" },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("REQUEST_INVALID");
    expect(response.body.error.message).toContain("by");
  });

  it("requires a JSON content type even for an empty body (a cross-site form cannot send one)", async () => {
    const api = await startApi();
    registerGuardedSkill(api);
    const { body } = await api.call("POST", "/api/skills/guarded/execute", { json: { input: { msg: "x" } } });

    const bare = await api.call("POST", `/api/executions/${body.id}/approve`);
    const empty = await api.call("POST", `/api/executions/${body.id}/approve`, {
      headers: { "content-type": "application/json" },
    });

    expect(bare.status).toBe(415);
    expect(bare.body.error.code).toBe("CONTENT_TYPE_INVALID");
    expect(empty.status).toBe(200);
    expect(empty.body.approval.decidedBy).toBe("public");
  });

  it("without API keys refuses approvals from a request whose peer it cannot tell is this machine", async () => {
    const api = await startApi();
    registerGuardedSkill(api);
    const { body } = await api.call("POST", "/api/skills/guarded/execute", { json: { input: { msg: "x" } } });
    const app = createHttpApp({ registry: api.host.registry, executor: api.host.executor });

    const response = await app.request(`http://localhost/api/executions/${body.id}/approve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });

    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect((await api.host.executor.getExecution(body.id))?.status).toBe("awaiting_approval");
  });

  it("refuses a reason or comment over 2000 characters, naming the field", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const response = await api.call("POST", `/api/executions/${id}/reject`, {
      key: "alice-approver",
      json: { reason: "x".repeat(2001) },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain("`reason`");
  });
});

describe("createHttpApp: POST /api/executions/:id/cancel", () => {
  it("lets any of the owner's keys cancel a waiting execution, with a reason", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);
    const id = await awaitingExecution(api);

    const foreign = await api.call("POST", `/api/executions/${id}/cancel`, { key: "bob-approver", json: {} });
    const cancelled = await api.call("POST", `/api/executions/${id}/cancel`, {
      key: "alice-key",
      json: { reason: "changed my mind" },
    });

    expect(foreign.status).toBe(404);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id, status: "cancelled" });
  });

  it("cancels a running execution", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const slow = registerSlowSkill(api);
    const { body } = await api.call("POST", "/api/skills/slow/execute", {
      key: "alice-key",
      json: { input: {} },
      headers: { prefer: "respond-async" },
    });

    await api.call("POST", `/api/executions/${body.id}/cancel`, { key: "alice-key", json: {} });
    const ended = await api.call("GET", `/api/executions/${body.id}?wait=30`, { key: "alice-key" });
    slow.first.open();
    slow.second.open();

    expect(ended.body.status).toBe("cancelled");
  });

  it("refuses to cancel a finished execution with 409 EXECUTION_FINISHED, changing nothing", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    const { body } = await api.call("POST", "/api/skills/echo/execute", {
      key: "alice-key",
      json: { input: { msg: "x" } },
    });

    const response = await api.call("POST", `/api/executions/${body.id}/cancel`, {
      key: "alice-key",
      json: {},
    });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe("EXECUTION_FINISHED");
    expect((await api.host.executor.getExecution(body.id))?.status).toBe("success");
  });
});

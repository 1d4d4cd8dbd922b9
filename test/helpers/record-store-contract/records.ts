import { createExecutionId } from "@skillbox/core/internal";
import { expect, it } from "vitest";
import {
  AUDITED_INPUT_JSON,
  claimOf,
  insert,
  type OpenRecordStore,
  OTHER_OWNER,
  OWNER,
  queuedRecord,
  RAW_SECRET,
  successOutcome,
  withStore,
} from "./fixture.js";

/** Schema, clock, inserts, reads, filters, summaries and idempotency keys. */
export function recordCases(open: OpenRecordStore): void {
  it("migrate() again, and from two stores at once, changes nothing and keeps the records", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const record = await insert(store);
      const another = await openAnother();
      await store.migrate();
      await Promise.all([store.migrate(), another.migrate(), store.migrate()]);
      expect((await another.get(record.id))?.status).toBe("queued");
      expect(await store.count()).toBe(1);
    });
  });

  it("now() is the database clock in ms since the epoch, never going back", async () => {
    await withStore(open, async ({ store }) => {
      const first = await store.now();
      const second = await store.now();
      expect(Number.isInteger(first)).toBe(true);
      // Same machine: the database clock and this process's agree within a minute.
      expect(Math.abs(first - Date.now())).toBeLessThan(60_000);
      expect(second).toBeGreaterThanOrEqual(first);
    });
  });

  it("insertQueued() records a queued execution with the audited input, never the raw one", async () => {
    await withStore(open, async ({ store }) => {
      const before = await store.now();
      const record = queuedRecord({ sessionId: "session-1", parentExecutionId: "parent-1" });
      const result = await store.insertQueued(record);
      if (!result.inserted) throw new Error("not inserted");
      const expected = {
        id: record.id,
        skillId: record.skillId,
        skillName: "echo",
        skillVersion: "1.0.0",
        apiKeyId: OWNER,
        sessionId: "session-1",
        parentExecutionId: "parent-1",
        idempotencyKey: null,
        input: JSON.parse(AUDITED_INPUT_JSON),
        output: null,
        status: "queued",
        error: null,
        attempts: 0,
        duration: null,
        progress: null,
        approval: null,
        traceId: null,
        spanId: null,
        finishedAt: null,
      };
      expect(result.execution).toMatchObject(expected);
      expect(Date.parse(result.execution.createdAt)).toBeGreaterThanOrEqual(before);
      const read = await store.get(record.id);
      expect(read).toEqual(result.execution);
      expect(JSON.stringify(read)).not.toContain(RAW_SECRET);
      expect(await store.get(record.id, OWNER)).toEqual(read);
      expect(await store.get(record.id, OTHER_OWNER)).toBeUndefined();
      expect(await store.get(createExecutionId())).toBeUndefined();
    });
  });

  it("an idempotency key the owner used returns the existing execution and its input hash; another owner may reuse it", async () => {
    await withStore(open, async ({ store }) => {
      const first = await insert(store, { idempotencyKey: "key-1", inputHash: "hash-1" });
      const repeat = queuedRecord({ idempotencyKey: "key-1", inputHash: "hash-2" });
      const again = await store.insertQueued(repeat);
      if (again.inserted) throw new Error("a repeated key inserted a second execution");
      expect(again.existing.id).toBe(first.id);
      expect(again.inputHash).toBe("hash-1");
      expect(await store.get(repeat.id)).toBeUndefined();
      const others = await store.insertQueued(
        queuedRecord({ apiKeyId: OTHER_OWNER, idempotencyKey: "key-1" }),
      );
      expect(others.inserted).toBe(true);
      const found = await store.findByIdempotencyKey(OWNER, "key-1");
      expect(found?.execution.id).toBe(first.id);
      expect(found?.inputHash).toBe("hash-1");
      expect(found?.execution.idempotencyKey).toBe("key-1");
      const othersFound = await store.findByIdempotencyKey(OTHER_OWNER, "key-1");
      expect(othersFound?.execution.apiKeyId).toBe(OTHER_OWNER);
      expect(await store.findByIdempotencyKey(OWNER, "key-2")).toBeUndefined();
      expect(await store.count()).toBe(2);
    });
  });

  it("two stores inserting the same owner's key at once write one execution", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const another = await openAnother();
      const results = await Promise.all([
        store.insertQueued(queuedRecord({ idempotencyKey: "race", inputHash: "h" })),
        another.insertQueued(queuedRecord({ idempotencyKey: "race", inputHash: "h" })),
      ]);
      expect(results.filter((result) => result.inserted)).toHaveLength(1);
      const winner = results.find((result) => result.inserted);
      const loser = results.find((result) => !result.inserted);
      if (winner?.inserted !== true || loser?.inserted !== false) throw new Error("expected one of each");
      expect(loser.existing.id).toBe(winner.execution.id);
      expect(await store.count()).toBe(1);
    });
  });

  it("dispatchTarget() tells where a queued execution's job goes, until it has no job", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, { queue: "sandbox", contentHash: "sha256:dispatch" });
      expect(await store.dispatchTarget(record.id)).toEqual({
        queue: "sandbox",
        contentHash: "sha256:dispatch",
      });
      const claim = await claimOf(store, record.id);
      expect(await store.finish(claim, successOutcome())).toBe(true);
      expect(await store.dispatchTarget(record.id)).toBeUndefined();
      expect(await store.dispatchTarget(createExecutionId())).toBeUndefined();
    });
  });

  it("inputHashKey() is one key of at least 16 bytes, the same for every store on the database", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const key = await store.inputHashKey();
      expect(Buffer.isBuffer(key)).toBe(true);
      expect(key.length).toBeGreaterThanOrEqual(16);
      expect((await store.inputHashKey()).equals(key)).toBe(true);
      expect((await (await openAnother()).inputHashKey()).equals(key)).toBe(true);
    });
  });

  it("list() and count() filter by owner, skill, status, session, parent and time; newest first; paged", async () => {
    await withStore(open, async ({ store }) => {
      const a = await insert(store, { sessionId: "s1" });
      const b = await insert(store, { parentExecutionId: a.id });
      const c = await insert(store, { skillName: "other", skillId: "skill-other-1" });
      const foreign = await insert(store, { apiKeyId: OTHER_OWNER });
      const ids = async (filters: Parameters<typeof store.list>[0]) =>
        (await store.list(filters)).map((e) => e.id);
      expect(await ids({ owner: OWNER })).toEqual([c.id, b.id, a.id]);
      expect(await ids({})).toEqual([foreign.id, c.id, b.id, a.id]);
      expect(await store.count({ owner: OWNER })).toBe(3);
      expect(await store.count()).toBe(4);
      expect(await ids({ owner: OWNER, skill: "echo" })).toEqual([b.id, a.id]);
      expect(await ids({ sessionId: "s1" })).toEqual([a.id]);
      expect(await ids({ parentExecutionId: a.id })).toEqual([b.id]);
      await claimOf(store, b.id);
      expect(await ids({ owner: OWNER, status: "running" })).toEqual([b.id]);
      expect(await ids({ owner: OWNER, status: ["running", "queued"] })).toEqual([c.id, b.id, a.id]);
      expect(await ids({ status: [] })).toEqual([]);
      expect(await store.count({ status: [] })).toBe(0);
      expect(await store.count({ owner: OWNER, status: "queued" })).toBe(2);
      expect(await ids({ owner: OWNER, limit: 2 })).toEqual([c.id, b.id]);
      expect(await ids({ owner: OWNER, limit: 2, offset: 2 })).toEqual([a.id]);
      expect(await store.count({ owner: OWNER, limit: 1 })).toBe(3);
      const later = Date.now() + 3_600_000;
      expect(await ids({ owner: OWNER, since: later })).toEqual([]);
      expect(await ids({ owner: OWNER, until: new Date(later) })).toEqual([c.id, b.id, a.id]);
      expect(await ids({ owner: OWNER, until: 0 })).toEqual([]);
      expect(await store.count({ owner: OWNER, since: new Date(later).toISOString() })).toBe(0);
    });
  });

  it("since/until compare created_at (the database's clock), whatever time the id carries", async () => {
    await withStore(open, async ({ store }) => {
      // A host whose clock is a minute behind the database's mints ids a minute "older".
      const record = await insert(store, { id: createExecutionId(Date.now() - 60_000) });
      const createdAt = Date.parse((await store.get(record.id))?.createdAt ?? "");
      expect((await store.list({ since: createdAt })).map((e) => e.id)).toEqual([record.id]);
      expect(await store.count({ since: createdAt })).toBe(1);
      expect(await store.list({ until: createdAt })).toEqual([]);
      expect(await store.count({ since: createdAt, until: createdAt + 1 })).toBe(1);
    });
  });

  it("listSummaries() cuts the bodies and the error message, pages within maxBytes, filters like list()", async () => {
    await withStore(open, async ({ store }) => {
      const a = await insert(store);
      const failed = await insert(store);
      const claim = await claimOf(store, failed.id);
      const message = "x".repeat(50);
      expect(
        await store.finish(claim, {
          status: "error",
          outputJson: null,
          error: { code: "HANDLER_ERROR", message, dataJson: JSON.stringify({ big: "y".repeat(100) }) },
          attempts: 1,
          durationMs: 3,
          traceId: null,
          spanId: null,
        }),
      ).toBe(true);
      await insert(store, { apiKeyId: OTHER_OWNER });
      const summaries = await store.listSummaries({ owner: OWNER, previewLength: 5 });
      expect(summaries.map((summary) => summary.id)).toEqual([failed.id, a.id]);
      const [failedSummary, queuedSummary] = summaries;
      expect(queuedSummary?.inputPreview).toEqual({
        text: AUDITED_INPUT_JSON.slice(0, 5),
        bytes: Buffer.byteLength(AUDITED_INPUT_JSON),
        truncated: true,
      });
      expect(queuedSummary?.outputPreview).toBeNull();
      expect(queuedSummary?.status).toBe("queued");
      expect(queuedSummary).not.toHaveProperty("input");
      expect(failedSummary?.error).toEqual({ code: "HANDLER_ERROR", message: "xxxxx…" });
      expect(failedSummary?.status).toBe("error");
      const whole = await store.listSummaries({ owner: OWNER });
      expect(whole[1]?.inputPreview).toEqual({
        text: AUDITED_INPUT_JSON,
        bytes: Buffer.byteLength(AUDITED_INPUT_JSON),
        truncated: false,
      });
      expect(whole[0]?.error).toEqual({ code: "HANDLER_ERROR", message });
      // The first summary always comes back, so paging by the count returned moves on.
      expect(await store.listSummaries({ owner: OWNER, maxBytes: 1 })).toHaveLength(1);
      expect((await store.listSummaries({ status: "error" })).map((summary) => summary.id)).toEqual([
        failed.id,
      ]);
      expect((await store.listSummaries({ owner: OWNER, limit: 1, offset: 1 })).map((s) => s.id)).toEqual([
        a.id,
      ]);
      await expect(store.listSummaries({ previewLength: -1 })).rejects.toMatchObject({
        code: "INPUT_INVALID",
      });
    });
  });
}

import type { RecordNotice, WorkerHeartbeat } from "@skillbox/core";
import { expect, it } from "vitest";
import {
  claimOf,
  insert,
  NOTICE_WAIT,
  type OpenRecordStore,
  OWNER,
  RAW_SECRET,
  successOutcome,
  withStore,
} from "./fixture.js";

function heartbeat(workerId: string, overrides: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat {
  return {
    workerId,
    host: "host-1",
    pid: 4242,
    queues: ["default", "sandbox"],
    skills: [{ name: "echo", version: "1.0.0", contentHash: "sha256:content-echo-1" }],
    concurrency: 8,
    running: 0,
    startedAt: Date.now() - 1000,
    ...overrides,
  };
}

/** Worker heartbeats and the notices every process gets. */
export function noticeCases(open: OpenRecordStore): void {
  it("heartbeatWorker() records a worker once (newest first, ages by the database clock); removeWorker() forgets it", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const another = await openAnother();
      const firstBeat = heartbeat("worker-1", { running: 3 });
      await store.heartbeatWorker(heartbeat("worker-1"));
      await store.heartbeatWorker(firstBeat);
      const [only] = await store.listWorkers();
      expect(only).toMatchObject(firstBeat);
      expect(only?.heartbeatAgeMs).toBeGreaterThanOrEqual(0);
      expect(Math.abs((only?.lastHeartbeatAt ?? 0) - (await store.now()))).toBeLessThan(60_000);
      // The next heartbeat lands on a later millisecond of the database clock: "newest first" is defined.
      await expect
        .poll(async () => (await store.now()) > (only?.lastHeartbeatAt ?? 0), NOTICE_WAIT)
        .toBe(true);
      await another.heartbeatWorker(heartbeat("worker-2", { host: "host-2", queues: ["default"] }));
      expect((await store.listWorkers()).map((worker) => worker.workerId)).toEqual(["worker-2", "worker-1"]);
      expect((await another.listWorkers({ withinMs: 60_000 })).map((worker) => worker.workerId)).toEqual([
        "worker-2",
        "worker-1",
      ]);
      // Heartbeats age out of a short window.
      await expect.poll(async () => (await store.listWorkers({ withinMs: 1 })).length, NOTICE_WAIT).toBe(0);
      await another.removeWorker("worker-1");
      expect((await store.listWorkers()).map((worker) => worker.workerId)).toEqual(["worker-2"]);
      await store.removeWorker("worker-unknown");
    });
  });

  it("subscribe() tells of claims, progress, cancel requests and finishes made through another store", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const another = await openAnother();
      const notices: RecordNotice[] = [];
      const stop = await store.subscribe((notice) => notices.push(notice));
      const record = await insert(another);
      const claim = await claimOf(another, record.id);
      const of = (type: RecordNotice["type"]) =>
        notices.filter((notice) => notice.type === type && notice.executionId === record.id);
      await expect
        .poll(() => of("status").map((notice) => "status" in notice && notice.status), NOTICE_WAIT)
        .toContain("running");
      expect(await another.recordProgress(claim, JSON.stringify({ progress: 1 }))).toBe(true);
      await expect.poll(() => of("progress").length, NOTICE_WAIT).toBeGreaterThan(0);
      expect(of("progress")[0]).toEqual({ type: "progress", executionId: record.id, apiKeyId: OWNER });
      expect((await another.requestCancel({ id: record.id, reason: "stop" })).kind).toBe("requested");
      await expect.poll(() => of("cancel").length, NOTICE_WAIT).toBeGreaterThan(0);
      expect(of("cancel")[0]).toEqual({ type: "cancel", executionId: record.id });
      expect(await another.finish(claim, successOutcome())).toBe(true);
      await expect
        .poll(
          () => of("status").find((notice) => "status" in notice && notice.status === "success"),
          NOTICE_WAIT,
        )
        .toEqual({ type: "status", executionId: record.id, apiKeyId: OWNER, status: "success" });
      expect(JSON.stringify(notices)).not.toContain(RAW_SECRET);
      await stop();
    });
  });

  it("the function subscribe() returns stops that listener only", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const another = await openAnother();
      const stopped: RecordNotice[] = [];
      const kept: RecordNotice[] = [];
      const stopFirst = await store.subscribe((notice) => stopped.push(notice));
      const stopSecond = await store.subscribe((notice) => kept.push(notice));
      await stopFirst();
      const record = await insert(another);
      const claim = await claimOf(another, record.id);
      expect(await another.finish(claim, successOutcome())).toBe(true);
      await expect
        .poll(
          () =>
            kept.some(
              (notice) =>
                notice.executionId === record.id && "status" in notice && notice.status === "success",
            ),
          NOTICE_WAIT,
        )
        .toBe(true);
      expect(stopped.filter((notice) => notice.executionId === record.id)).toEqual([]);
      await stopSecond();
    });
  });
}

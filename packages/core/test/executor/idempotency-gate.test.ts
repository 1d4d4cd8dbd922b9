import { createHash } from "node:crypto";
import { getEventListeners } from "node:events";
import { createSkillHost, defineInterceptor, type SkillHost } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { deferred, registerSkill as register, rejection, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

describe("IdempotencyGate", () => {
  describe("input of a repeat", () => {
    it("answers IDEMPOTENCY_CONFLICT for the same key with a different input, naming the key", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      let calls = 0;
      host.executor.registerHandler("charge", (input: { amount: number }) => {
        calls++;
        return { charged: input.amount };
      });
      const first = await host.executor.execute("charge", { amount: 10 }, { idempotencyKey: "order-1" });
      const error = await rejection(
        host.executor.execute("charge", { amount: 99 }, { idempotencyKey: "order-1" }),
        "IDEMPOTENCY_CONFLICT",
      );
      expect(error.message).toContain('"order-1"');
      expect(error.message).toContain("different input");
      expect(error.data).toEqual({ executionId: first.id });
      expect(calls).toBe(1);
      expect(host.executor.countExecutions()).toBe(1);
    });

    it("returns the stored execution for the same input written with its keys in another order", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      host.executor.registerHandler("charge", () => "charged");
      const first = await host.executor.execute(
        "charge",
        { amount: 10, card: { last4: "4242", brand: "visa" }, items: [1, 2] },
        { idempotencyKey: "order-2" },
      );
      const repeat = await host.executor.execute(
        "charge",
        { items: [1, 2], card: { brand: "visa", last4: "4242" }, amount: 10 },
        { idempotencyKey: "order-2" },
      );
      expect(repeat.id).toBe(first.id);
      // Array order is part of the input.
      await rejection(
        host.executor.execute(
          "charge",
          { amount: 10, card: { last4: "4242", brand: "visa" }, items: [2, 1] },
          { idempotencyKey: "order-2" },
        ),
        "IDEMPOTENCY_CONFLICT",
      );
    });

    it("answers IDEMPOTENCY_CONFLICT at once while the first execution is still in flight", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      const release = deferred();
      host.executor.registerHandler("charge", async () => {
        await release.promise;
        return "charged";
      });
      const first = host.executor.execute("charge", { amount: 10 }, { idempotencyKey: "order-3" });
      await rejection(
        host.executor.execute("charge", { amount: 11 }, { idempotencyKey: "order-3" }),
        "IDEMPOTENCY_CONFLICT",
      );
      release.resolve();
      expect((await first).status).toBe("success");
    });

    it("compares the caller's input, not the redacted input in the audit trail", async () => {
      const host = newHost();
      register(host, { name: "login" });
      let calls = 0;
      host.executor.registerHandler("login", () => ++calls);
      host.executor.use(
        defineInterceptor({
          name: "redact",
          audit: (_context, entry) =>
            "input" in entry ? { input: { ...(entry.input as object), password: "[redacted]" } } : entry,
        }),
      );
      const first = await host.executor.execute(
        "login",
        { user: "ada", password: "hunter2" },
        { idempotencyKey: "login-1" },
      );
      expect(host.executor.getExecution(first.id)?.input).toEqual({ user: "ada", password: "[redacted]" });
      const repeat = await host.executor.execute(
        "login",
        { user: "ada", password: "hunter2" },
        { idempotencyKey: "login-1" },
      );
      expect(repeat.id).toBe(first.id);
      // Redacted alike, yet another input.
      await rejection(
        host.executor.execute("login", { user: "ada", password: "other" }, { idempotencyKey: "login-1" }),
        "IDEMPOTENCY_CONFLICT",
      );
      expect(calls).toBe(1);
    });

    it("stores a keyed hash of the input, so a guess of a redacted secret cannot be tested against it", async () => {
      const input = { user: "ada", password: "hunter2" };
      const storedHash = (host: SkillHost, id: string) =>
        host.database
          .prepare<[string], string>("SELECT input_hash FROM skill_executions WHERE id = ?")
          .pluck()
          .get(id);
      const [host, elsewhere] = [newHost(), newHost()];
      for (const each of [host, elsewhere]) {
        register(each, { name: "login" });
        each.executor.registerHandler("login", () => "logged in");
      }
      const first = await host.executor.execute("login", input, { idempotencyKey: "login-2" });
      const other = await elsewhere.executor.execute("login", input, { idempotencyKey: "login-2" });
      const hash = storedHash(host, first.id);
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      // Whoever reads the file cannot recompute it from a guessed input…
      const unkeyed = createHash("sha256").update('{"password":"hunter2","user":"ada"}').digest("hex");
      expect(hash).not.toBe(unkeyed);
      // …nor compare it with another database's hash of the same input.
      expect(storedHash(elsewhere, other.id)).not.toBe(hash);
      // Every process on the file shares the key: a second host still recognises a repeat.
      const second = createSkillHost({
        database: host.databasePath,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      newHost.track(second);
      second.executor.registerHandler("login", () => "logged in again");
      const repeat = await second.executor.execute("login", { ...input }, { idempotencyKey: "login-2" });
      expect(repeat.id).toBe(first.id);
      expect(repeat.output).toBe("logged in");
      await rejection(
        second.executor.execute("login", { ...input, password: "hunter3" }, { idempotencyKey: "login-2" }),
        "IDEMPOTENCY_CONFLICT",
      );
    });

    it("answers IDEMPOTENCY_CONFLICT for a key another host on the same database used with another input", async () => {
      const host = newHost();
      const other = createSkillHost({
        database: host.databasePath,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      newHost.track(other);
      register(host, { name: "charge" });
      host.executor.registerHandler("charge", () => "charged");
      other.executor.registerHandler("charge", () => "charged again");
      const first = await host.executor.execute("charge", { amount: 10 }, { idempotencyKey: "order-4" });
      const same = await other.executor.execute("charge", { amount: 10 }, { idempotencyKey: "order-4" });
      expect(same.id).toBe(first.id);
      expect(same.output).toBe("charged");
      await rejection(
        other.executor.execute("charge", { amount: 12 }, { idempotencyKey: "order-4" }),
        "IDEMPOTENCY_CONFLICT",
      );
    });
  });

  describe("waiting for the first execution", () => {
    it("ends a duplicate's wait in the same process when its caller's signal aborts", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      const release = deferred();
      const started = deferred();
      host.executor.registerHandler("charge", async () => {
        started.resolve();
        await release.promise;
        return "charged";
      });
      const first = host.executor.execute("charge", {}, { idempotencyKey: "order-5" });
      await started.promise;
      const controller = new AbortController();
      const duplicate = host.executor.execute(
        "charge",
        {},
        { idempotencyKey: "order-5", signal: controller.signal },
      );
      controller.abort();
      const error = await rejection(duplicate, "CANCELLED");
      expect(error.message).toContain("order-5");
      // Only the duplicate's wait ended: the first execution runs on and finishes.
      release.resolve();
      expect((await first).status).toBe("success");
    });

    it("ends a duplicate's wait when its waitSignal aborts, and never cancels an execution through it", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      const release = deferred();
      const started = deferred();
      host.executor.registerHandler("charge", async () => {
        started.resolve();
        await release.promise;
        return "charged";
      });
      const ownWait = new AbortController();
      const first = host.executor.execute(
        "charge",
        {},
        { idempotencyKey: "order-7", waitSignal: ownWait.signal },
      );
      await started.promise;
      const duplicateWait = new AbortController();
      const duplicate = host.executor.execute(
        "charge",
        {},
        { idempotencyKey: "order-7", waitSignal: duplicateWait.signal },
      );
      duplicateWait.abort();
      await rejection(duplicate, "CANCELLED");
      // The first call's own waitSignal does not cancel its execution.
      ownWait.abort();
      release.resolve();
      const execution = await first;
      expect(execution.status).toBe("success");
      expect(execution.output).toBe("charged");
    });

    it("refuses at once a duplicate whose signal has already aborted", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      const release = deferred();
      host.executor.registerHandler("charge", async () => {
        await release.promise;
        return "charged";
      });
      const first = host.executor.execute("charge", {}, { idempotencyKey: "order-6" });
      await rejection(
        host.executor.execute("charge", {}, { idempotencyKey: "order-6", signal: AbortSignal.abort() }),
        "CANCELLED",
      );
      release.resolve();
      expect((await first).status).toBe("success");
    });

    it("leaves nothing behind on a long-lived signal that many executions share", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      let calls = 0;
      host.executor.registerHandler("charge", () => {
        calls++;
        // Every other attempt fails, so each execution also waits once to retry.
        if (calls % 2 === 1) throw Object.assign(new Error("flaky"), { code: "ECONNRESET" });
        return "charged";
      });
      // An application's own shutdown signal, passed to every call.
      const application = new AbortController();
      for (let order = 0; order < 20; order++) {
        const first = host.executor.execute(
          "charge",
          { order },
          {
            idempotencyKey: `order-${order}`,
            signal: application.signal,
            retry: { maxAttempts: 2, initialDelayMs: 1, jitter: 0 },
          },
        );
        // A duplicate in flight waits on the first through the signal too.
        const duplicate = host.executor.execute(
          "charge",
          { order },
          { idempotencyKey: `order-${order}`, signal: application.signal },
        );
        const [execution, repeat] = await Promise.all([first, duplicate]);
        expect(execution.status).toBe("success");
        expect(repeat.id).toBe(execution.id);
      }
      expect(calls).toBe(40);
      // What Node keeps on a source for each AbortSignal.any() it took part in, for the source's
      // whole life (one entry per call: unbounded on a signal that lives as long as the app).
      const dependants = Object.getOwnPropertySymbols(application.signal).find(
        (symbol) => symbol.description === "kDependantSignals",
      );
      const kept = dependants === undefined ? undefined : Reflect.get(application.signal, dependants);
      expect((kept as Set<unknown> | undefined)?.size ?? 0).toBe(0);
      expect(getEventListeners(application.signal, "abort")).toHaveLength(0);
    });
  });
});

import { createHash } from "node:crypto";
import { getEventListeners } from "node:events";
import {
  createSkillHost,
  defineInterceptor,
  type Skill,
  SkillboxError,
  type SkillExecution,
  type SkillHost,
} from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutionId } from "../../src/executor/create-execution-id.js";
import { ExecutionStore } from "../../src/executor/execution-store.js";
import { IdempotencyGate, type IdempotencyGateOptions } from "../../src/executor/idempotency-gate.js";
import {
  type Deferred,
  deferred,
  registerSkill as register,
  rejection,
  useTemporaryHosts,
} from "./executor-test-bed.js";

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
      expect(await host.executor.countExecutions()).toBe(1);
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
      expect((await host.executor.getExecution(first.id))?.input).toEqual({
        user: "ada",
        password: "[redacted]",
      });
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

/** A host's database with a store and a gate of its own, as `SkillExecutor` builds them. */
interface GateBed {
  host: SkillHost;
  store: ExecutionStore;
  gate: IdempotencyGate;
  /** Another runner on the same file, as another process would open it. */
  otherStore(): ExecutionStore;
}

const stores: ExecutionStore[] = [];

// Registered after `useTemporaryHosts`, so it runs first: stores close before their databases.
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

function openStore(host: SkillHost): ExecutionStore {
  // A lease far longer than a test: no periodic sweep recovers a row while a test watches it.
  const store = new ExecutionStore(host.database, `gate-test-${createExecutionId()}`, { leaseMs: 600_000 });
  stores.push(store);
  return store;
}

function openGate(options: Partial<IdempotencyGateOptions> = {}): GateBed {
  // The host's own executor sweeps no dead runners either: what recovers one here is the gate.
  const host = newHost({ recoverInterrupted: false });
  const store = openStore(host);
  const gate = new IdempotencyGate(store, { attemptTimeoutMs: () => 30_000, graceMs: 30_000, ...options });
  return { host, store, gate, otherStore: () => openStore(host) };
}

interface StoredRun {
  store: ExecutionStore;
  skill: Skill;
  owner?: string;
  key: string;
  input?: unknown;
  inputHash: string | null;
  /** When the row was created (default now). */
  createdAt?: number;
  /** Awaited between the `running` row and its final state. */
  running?: Promise<unknown>;
  /** Told once the `running` row is committed. */
  started?: Deferred<string>;
  status?: "success" | "cancelled";
  output?: unknown;
}

/** Writes an execution's rows as the executor does (`running`, then final); returns the record. */
async function storedExecution(run: StoredRun): Promise<SkillExecution> {
  const id = createExecutionId();
  const rowid = await run.store.start(
    {
      id,
      skillId: run.skill.id,
      skillName: run.skill.name,
      skillVersion: run.skill.version,
      apiKeyId: run.owner ?? "public",
      sessionId: null,
      parentExecutionId: null,
      idempotencyKey: run.key,
    },
    JSON.stringify(run.input ?? {}),
    run.createdAt ?? Date.now(),
    { inputHash: run.inputHash },
  );
  run.started?.resolve(id);
  await run.running;
  const status = run.status ?? "success";
  await run.store.finish({
    rowid,
    id,
    status,
    outputJson: status === "success" ? JSON.stringify(run.output ?? "charged") : null,
    error: status === "success" ? null : { code: "CANCELLED", message: "The caller cancelled it" },
    attempts: 1,
    duration: 1,
    finishedAt: Date.now(),
  });
  return run.store.get(id)!;
}

/** A request of `skill` under `key` whose execution writes its rows through `bed.store`. */
function request(
  bed: GateBed,
  skill: Skill,
  options: { key: string; owner?: string; input?: unknown; signal?: AbortSignal } & Partial<StoredRun>,
) {
  const calls: (string | null)[] = [];
  const owner = options.owner ?? "public";
  const input = options.input ?? { amount: 10 };
  const promise = bed.gate.run({
    skill,
    owner,
    key: options.key,
    input,
    signal: options.signal,
    execute: (inputHash) => {
      calls.push(inputHash);
      return storedExecution({ store: bed.store, ...options, skill, owner, input, inputHash });
    },
  });
  return { promise, calls };
}

describe("IdempotencyGate on its own", () => {
  describe("a repeat of a finished execution", () => {
    it("runs once per owner and key, and answers a repeat with the stored execution", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const first = request(bed, skill, { key: "order-1", output: "first" });
      const execution = await first.promise;
      expect(first.calls).toHaveLength(1);
      // The caller's input hashed under the database's key, to be stored with the row.
      expect(first.calls[0]).toMatch(/^[0-9a-f]{64}$/);
      const repeat = request(bed, skill, { key: "order-1", input: { amount: 10 }, output: "second" });
      expect(await repeat.promise).toEqual(execution);
      expect(repeat.calls).toEqual([]);
      expect(execution).toMatchObject({ status: "success", output: "first", idempotencyKey: "order-1" });
    });

    it("keeps keys apart per owner", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const mine = await request(bed, skill, { key: "order-1", owner: "tenant-a" }).promise;
      const theirs = request(bed, skill, { key: "order-1", owner: "tenant-b" });
      expect((await theirs.promise).id).not.toBe(mine.id);
      expect(theirs.calls).toHaveLength(1);
      // Also while both are in flight.
      const release = deferred();
      const [one, other] = ["tenant-a", "tenant-b"].map((owner) =>
        request(bed, skill, { key: "order-2", owner, running: release.promise }),
      );
      release.resolve();
      const [oneExecution, otherExecution] = await Promise.all([one!.promise, other!.promise]);
      expect(oneExecution.id).not.toBe(otherExecution.id);
      expect([one!.calls.length, other!.calls.length]).toEqual([1, 1]);
    });

    it("finds an execution another process stored under the key", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const elsewhere = new IdempotencyGate(bed.otherStore(), { attemptTimeoutMs: () => 30_000, graceMs: 0 });
      const first = await request({ ...bed, gate: elsewhere }, skill, { key: "order-1" }).promise;
      const repeat = request(bed, skill, { key: "order-1", input: { amount: 10 } });
      expect((await repeat.promise).id).toBe(first.id);
      expect(repeat.calls).toEqual([]);
    });

    it("frees the key when the first execution fails before writing a row", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const failed = bed.gate.run({
        skill,
        owner: "public",
        key: "order-1",
        input: {},
        signal: undefined,
        execute: () => Promise.reject(new SkillboxError("HANDLER_NOT_FOUND", "no handler")),
      });
      await rejection(failed, "HANDLER_NOT_FOUND");
      const retried = request(bed, skill, { key: "order-1", input: {} });
      expect((await retried.promise).status).toBe("success");
      expect(retried.calls).toHaveLength(1);
    });

    it("answers with the row of another process that inserted the same key first", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const other = bed.otherStore();
      let winner: SkillExecution | undefined;
      const lost = bed.gate.run({
        skill,
        owner: "public",
        key: "order-1",
        input: { amount: 10 },
        signal: undefined,
        async execute(inputHash) {
          // The other process wins the race for the key; this process's insert then fails.
          winner = await storedExecution({
            store: other,
            skill,
            key: "order-1",
            inputHash,
            output: "theirs",
          });
          return storedExecution({ store: bed.store, skill, key: "order-1", inputHash, output: "ours" });
        },
      });
      const execution = await lost;
      expect(execution.id).toBe(winner?.id);
      expect(execution.output).toBe("theirs");
      expect(bed.store.count({})).toBe(1);
    });
  });

  describe("conflicts", () => {
    it("answers IDEMPOTENCY_CONFLICT for the key used with another skill, naming both", async () => {
      const bed = openGate();
      const charge = register(bed.host, { name: "charge" });
      const refund = register(bed.host, { name: "refund" });
      const first = await request(bed, charge, { key: "order-1" }).promise;
      const other = request(bed, refund, { key: "order-1" });
      const error = await rejection(other.promise, "IDEMPOTENCY_CONFLICT");
      expect(error.message).toContain("already used for charge, not refund");
      expect(error.data).toEqual({ executionId: first.id });
      expect(other.calls).toEqual([]);
    });

    it("answers IDEMPOTENCY_CONFLICT for the key used with another input, stored or in flight", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const stored = await request(bed, skill, { key: "order-1", input: { amount: 10 } }).promise;
      const error = await rejection(
        request(bed, skill, { key: "order-1", input: { amount: 11 } }).promise,
        "IDEMPOTENCY_CONFLICT",
      );
      expect(error.message).toContain("different input");
      expect(error.data).toEqual({ executionId: stored.id });
      // In flight: answered at once, naming the row the first execution has written so far.
      const release = deferred();
      const started = deferred<string>();
      const first = request(bed, skill, { key: "order-2", running: release.promise, started });
      const id = await started.promise;
      const inFlight = await rejection(
        request(bed, skill, { key: "order-2", input: { amount: 12 } }).promise,
        "IDEMPOTENCY_CONFLICT",
      );
      expect(inFlight.data).toEqual({ executionId: id });
      release.resolve();
      expect((await first.promise).status).toBe("success");
    });

    it("lets any input repeat a first execution whose input has no hash", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      // A row from before input hashes, or an input JSON cannot write.
      const first = await storedExecution({ store: bed.store, skill, key: "order-1", inputHash: null });
      const repeat = request(bed, skill, { key: "order-1", input: { amount: 99 } });
      expect((await repeat.promise).id).toBe(first.id);
    });
  });

  describe("waiting for a first execution in this process", () => {
    it("shares the first execution with a duplicate that arrives while it runs", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const release = deferred();
      const first = request(bed, skill, { key: "order-1", running: release.promise });
      const duplicate = request(bed, skill, { key: "order-1", input: { amount: 10 } });
      release.resolve();
      const [execution, shared] = await Promise.all([first.promise, duplicate.promise]);
      expect(shared).toBe(execution);
      expect([first.calls.length, duplicate.calls.length]).toEqual([1, 0]);
    });

    it("gives a waiting duplicate the first execution's end, a cancelled one or a failure", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const release = deferred();
      const first = request(bed, skill, { key: "order-1", running: release.promise, status: "cancelled" });
      const duplicate = request(bed, skill, { key: "order-1" });
      release.resolve();
      expect((await duplicate.promise).status).toBe("cancelled");
      expect((await duplicate.promise).id).toBe((await first.promise).id);
      // A first execution that fails without a row fails its duplicates too; the key is free after.
      const failing = deferred<SkillExecution>();
      const execute = () => failing.promise;
      const firstFailure = bed.gate.run({
        skill,
        owner: "public",
        key: "order-2",
        input: {},
        signal: undefined,
        execute,
      });
      const waiting = bed.gate.run({
        skill,
        owner: "public",
        key: "order-2",
        input: {},
        signal: undefined,
        execute,
      });
      failing.reject(new SkillboxError("RUNTIME_NOT_FOUND", "no runtime"));
      await rejection(firstFailure, "RUNTIME_NOT_FOUND");
      await rejection(waiting, "RUNTIME_NOT_FOUND");
    });

    it("ends a duplicate's wait when its signal aborts, and the first execution goes on", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const release = deferred();
      const first = request(bed, skill, { key: "order-1", running: release.promise });
      const controller = new AbortController();
      const duplicate = request(bed, skill, { key: "order-1", signal: controller.signal });
      controller.abort();
      const error = await rejection(duplicate.promise, "CANCELLED");
      expect(error.message).toContain('idempotency key "order-1"');
      expect(error.data).toEqual({ executionId: undefined, idempotencyKey: "order-1" });
      // Refused at once with a signal already aborted.
      await rejection(
        request(bed, skill, { key: "order-1", signal: AbortSignal.abort() }).promise,
        "CANCELLED",
      );
      release.resolve();
      const execution = await first.promise;
      expect(execution.status).toBe("success");
      expect((await request(bed, skill, { key: "order-1" }).promise).id).toBe(execution.id);
    });

    it("gives up with TIMEOUT once the first execution has outlived every timeout its skill allows", async () => {
      // Timeouts this short let the test reach the end of the wait; the first execution outlives them.
      const bed = openGate({ attemptTimeoutMs: () => 1, graceMs: 0 });
      const skill = register(bed.host, { name: "charge" });
      const release = deferred();
      const first = request(bed, skill, { key: "order-1", running: release.promise });
      const error = await rejection(request(bed, skill, { key: "order-1" }).promise, "TIMEOUT");
      expect(error.message).toContain("still running after every timeout its skill allows");
      expect(error.data).toEqual({ executionId: undefined, idempotencyKey: "order-1" });
      release.resolve();
      expect((await first.promise).status).toBe("success");
    });
  });

  describe("waiting for a first execution in another process", () => {
    it("polls the row until the other process writes its final state", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const release = deferred();
      const started = deferred<string>();
      const elsewhere = storedExecution({
        store: bed.otherStore(),
        skill,
        key: "order-1",
        inputHash: null,
        running: release.promise,
        started,
      });
      const id = await started.promise;
      const duplicate = request(bed, skill, { key: "order-1" });
      release.resolve();
      const execution = await duplicate.promise;
      expect(execution).toMatchObject({ id, status: "success" });
      expect(execution).toEqual(await elsewhere);
      expect(duplicate.calls).toEqual([]);
    });

    it("ends the wait when the waiting caller's signal aborts, naming the execution", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const release = deferred();
      const started = deferred<string>();
      const elsewhere = storedExecution({
        store: bed.otherStore(),
        skill,
        key: "order-1",
        inputHash: null,
        running: release.promise,
        started,
      });
      const id = await started.promise;
      const controller = new AbortController();
      const duplicate = request(bed, skill, { key: "order-1", signal: controller.signal });
      controller.abort();
      const error = await rejection(duplicate.promise, "CANCELLED");
      expect(error.data).toEqual({ executionId: id, idempotencyKey: "order-1" });
      expect(error.message).toContain(`execution ${id}`);
      // Refused at once with a signal already aborted.
      const refused = await rejection(
        request(bed, skill, { key: "order-1", signal: AbortSignal.abort() }).promise,
        "CANCELLED",
      );
      expect(refused.data).toEqual({ executionId: id, idempotencyKey: "order-1" });
      release.resolve();
      expect((await elsewhere).status).toBe("success");
    });

    it("recovers the row of a runner that died, and answers with it interrupted", async () => {
      const bed = openGate();
      const skill = register(bed.host, { name: "charge" });
      const other = bed.otherStore();
      const started = deferred<string>();
      void storedExecution({
        store: other,
        skill,
        key: "order-1",
        inputHash: null,
        running: new Promise(() => {}),
        started,
      });
      const id = await started.promise;
      // The other process crashed: its runner never closed, and its lease lapsed.
      await other.close();
      bed.host.database
        .prepare("UPDATE skillbox_runners SET closed_at = NULL, lease_expires_at = 1 WHERE runner_id = ?")
        .run(other.runnerId);
      const execution = await request(bed, skill, { key: "order-1" }).promise;
      expect(execution).toMatchObject({ id, status: "interrupted", error: { code: "INTERRUPTED" } });
    });

    it("counts every attempt, the retry delays, the host's total timeout and the grace in its deadline", async () => {
      const minutes = (count: number) => count * 60_000;
      // A first execution still running, which another process started 25 minutes ago.
      const waitFor = async (options: Partial<IdempotencyGateOptions>, retry?: Skill["retry"]) => {
        const bed = openGate({ attemptTimeoutMs: () => minutes(10), graceMs: 0, ...options });
        const skill = register(bed.host, { name: "charge", retry });
        const other = bed.otherStore();
        const release = deferred();
        const started = deferred<string>();
        const elsewhere = storedExecution({
          store: other,
          skill,
          key: "order-1",
          inputHash: null,
          createdAt: Date.now() - minutes(25),
          running: release.promise,
          started,
        });
        await started.promise;
        const outcome = request(bed, skill, { key: "order-1" }).promise.then(
          (execution) => execution.status,
          (error: SkillboxError) => error.code,
        );
        release.resolve();
        await elsewhere;
        return outcome;
      };
      // One attempt of 10 minutes ended long ago: the wait gives up at once.
      expect(await waitFor({})).toBe("TIMEOUT");
      // Three attempts may take 30 minutes and more: the first execution is waited for.
      expect(await waitFor({}, { maxAttempts: 3 })).toBe("success");
      // Unless the host ends every execution after 20 minutes.
      expect(await waitFor({ totalTimeoutMs: minutes(20) }, { maxAttempts: 3 })).toBe("TIMEOUT");
      // The grace for a dead runner's lease counts on top.
      expect(await waitFor({ graceMs: minutes(20) })).toBe("success");
      // Retry delays count too, as long as the policy lets them be: two attempts (20 minutes)
      // and a delay of 5 minutes, 6 with its jitter…
      const longDelay = { maxAttempts: 2, initialDelayMs: minutes(5), maxDelayMs: minutes(10), jitter: 0.2 };
      expect(await waitFor({}, longDelay)).toBe("success");
      // …which a shorter delay, or the policy's cap on delays, does not reach.
      expect(await waitFor({}, { ...longDelay, initialDelayMs: minutes(4), jitter: 0 })).toBe("TIMEOUT");
      expect(await waitFor({}, { ...longDelay, maxDelayMs: minutes(1) })).toBe("TIMEOUT");
    });
  });
});

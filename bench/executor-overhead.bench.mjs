// Executor overhead on a no-op inline skill with 3 no-op interceptors and the audit trail on,
// against the bare handler call and the raw better-sqlite3 floor for a durable audit row
// (one INSERT + one UPDATE per call, same schema and pragmas).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSkillHost, defineInterceptor, openDatabase } from "@skillbox/core";
import { v7 as timeOrderedUuid } from "uuid";
import { compareRates, concurrentRate, formatRate, sequentialRate } from "./lib/measure.mjs";

const SEQUENTIAL_COUNT = Number(process.env.BENCH_SEQUENTIAL ?? 5_000);
const CONCURRENT_COUNT = Number(process.env.BENCH_CONCURRENT ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const directory = mkdtempSync(join(tmpdir(), "skillbox-bench-"));
try {
  const host = createSkillHost({ database: join(directory, "skillbox.db"), logger: silentLogger() });
  host.registry.register({
    name: "noop",
    version: "1.0.0",
    schema: { input: { type: "object" } },
    handler: "noop",
    apiKeyId: "public",
  });
  const handler = async (input) => input;
  host.executor.registerHandler("noop", handler);
  for (const name of ["first", "second", "third"]) {
    host.executor.use(defineInterceptor({ name, before() {}, after() {} }));
  }
  const input = { value: 1 };
  const execute = () => host.executor.execute("noop", input);

  const raw = openDatabase({ path: join(directory, "raw.db") });
  const runner = raw
    .prepare(
      "INSERT INTO skillbox_runners (runner_id, pid, host, started_at) VALUES ('bench', ?, 'bench', ?)",
    )
    .run(process.pid, Date.now()).lastInsertRowid;
  const insert = raw.prepare(
    `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
       parent_execution_id, idempotency_key, input, status, attempts, created_at, runner)
     VALUES (?, 'skill', 'noop', '1.0.0', 'public', NULL, NULL, NULL, ?, 'running', 0, ?, ?)`,
  );
  const update = raw.prepare(
    `UPDATE skill_executions SET status = 'success', output = ?, attempts = 1, duration_ms = 0, finished_at = ?
     WHERE id = ?`,
  );
  // The floor uses the same time-ordered ids as the executor, so both write the same b-trees.
  const rawAuditRow = async () => {
    const id = timeOrderedUuid();
    insert.run(id, JSON.stringify(input), Date.now(), runner);
    await handler(input);
    update.run(JSON.stringify(input), Date.now(), id);
  };
  // The same rows group-committed 64 at a time, as the executor does under concurrency:
  // the floor for durable audit rows at concurrency 64.
  const insertBatch = raw.transaction((ids) => {
    for (const id of ids) insert.run(id, JSON.stringify(input), Date.now(), runner);
  });
  const finishBatch = raw.transaction((ids) => {
    for (const id of ids) update.run(JSON.stringify(input), Date.now(), id);
  });
  const rawBatchedFloor = async () => {
    const started = performance.now();
    for (let done = 0; done < CONCURRENT_COUNT; done += 64) {
      const ids = Array.from({ length: 64 }, () => timeOrderedUuid());
      insertBatch.immediate(ids);
      await Promise.all(ids.map(() => handler(input)));
      finishBatch.immediate(ids);
    }
    return CONCURRENT_COUNT / ((performance.now() - started) / 1000);
  };
  const context = { signal: new AbortController().signal };

  // Warm up JIT, Ajv and caches.
  await sequentialRate(2_000, execute);
  await sequentialRate(2_000, rawAuditRow);

  const rates = await compareRates(
    {
      bareCall: () => sequentialRate(SEQUENTIAL_COUNT * 10, () => handler(input, context)),
      rawSqliteFloor: () => sequentialRate(SEQUENTIAL_COUNT, rawAuditRow),
      skillboxSequential: () => sequentialRate(SEQUENTIAL_COUNT, execute),
      rawBatchedFloor,
      skillboxConcurrent64: () => concurrentRate(CONCURRENT_COUNT, 64, execute),
    },
    ROUNDS,
  );
  await host.close();
  raw.close();

  const sequentialRatio = rates.rawSqliteFloor / rates.skillboxSequential;
  console.log("executor overhead (no-op inline skill, 3 no-op interceptors, audit trail on)");
  console.log(`  bare handler call           ${formatRate(rates.bareCall)}`);
  console.log(
    `  raw better-sqlite3 floor    ${formatRate(rates.rawSqliteFloor)}  (INSERT + UPDATE per call, sequential)`,
  );
  console.log(`  skillbox sequential         ${formatRate(rates.skillboxSequential)}`);
  console.log(
    `  raw floor, 64 per commit    ${formatRate(rates.rawBatchedFloor)}  (INSERT + UPDATE, group-committed)`,
  );
  console.log(`  skillbox concurrency 64     ${formatRate(rates.skillboxConcurrent64)}`);
  console.log(
    `  sequential time / raw floor time = ${sequentialRatio.toFixed(2)}x (target <= 2x) ${sequentialRatio <= 2 ? "OK" : "MISSED"}`,
  );
  console.log(
    `  concurrency 64 = ${formatRate(rates.skillboxConcurrent64)} (target >= 50,000/s) ${rates.skillboxConcurrent64 >= 50_000 ? "OK" : "MISSED"}`,
  );
  console.log(
    `  skillbox concurrency 64 / group-committed raw floor = ${(rates.skillboxConcurrent64 / rates.rawBatchedFloor).toFixed(2)}x`,
  );
  console.log(`  (medians of ${ROUNDS} interleaved rounds)`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}

function silentLogger() {
  const nothing = () => {};
  return { debug: nothing, info: nothing, warn: nothing, error: nothing };
}

// Executor overhead on a no-op inline skill with 3 no-op interceptors and the audit trail on,
// against the bare handler call and the raw better-sqlite3 floor for a durable audit row
// (one INSERT + one UPDATE per call, same schema and pragmas).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSkillHost } from "@skillbox/core";
import { registerNoopSkill, silentLogger } from "./lib/fixtures.mjs";
import { compareRates, concurrentRate, formatRate, sequentialRate } from "./lib/measure.mjs";
import { createRawAuditFloor } from "./lib/raw-audit-floor.mjs";

const SEQUENTIAL_COUNT = Number(process.env.BENCH_SEQUENTIAL ?? 5_000);
const CONCURRENT_COUNT = Number(process.env.BENCH_CONCURRENT ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const directory = mkdtempSync(join(tmpdir(), "skillbox-bench-"));
try {
  const host = createSkillHost({ database: join(directory, "skillbox.db"), logger: silentLogger() });
  const handler = registerNoopSkill(host, { interceptors: 3 });
  const input = { value: 1 };
  const execute = () => host.executor.execute("noop", input);

  const floor = createRawAuditFloor(join(directory, "raw.db"));
  const rawAuditRow = async () => {
    const rowid = floor.start(JSON.stringify(input));
    await handler(input);
    floor.finish(rowid, JSON.stringify(input));
  };
  // The same rows group-committed 64 at a time, as the executor does under concurrency:
  // the floor for durable audit rows at concurrency 64.
  const rawBatchedFloor = async () => {
    const started = performance.now();
    for (let done = 0; done < CONCURRENT_COUNT; done += 64) {
      const rowids = floor.startBatch(Array.from({ length: 64 }, () => JSON.stringify(input)));
      await Promise.all(rowids.map(() => handler(input)));
      floor.finishBatch(rowids, JSON.stringify(input));
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
  floor.close();

  const sequentialRatio = rates.rawSqliteFloor / rates.skillboxSequential;
  const concurrentRatio = rates.skillboxConcurrent64 / rates.rawBatchedFloor;
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
    `  sequential time / raw floor time = ${sequentialRatio.toFixed(2)}x (target <= 1.5x) ${sequentialRatio <= 1.5 ? "OK" : "MISSED"}`,
  );
  console.log(
    `  concurrency 64 = ${formatRate(rates.skillboxConcurrent64)} (target >= 50,000/s) ${rates.skillboxConcurrent64 >= 50_000 ? "OK" : "MISSED"}`,
  );
  console.log(
    `  skillbox concurrency 64 / group-committed raw floor = ${concurrentRatio.toFixed(2)}x (target >= 0.7x) ${concurrentRatio >= 0.7 ? "OK" : "MISSED"}`,
  );
  console.log(`  (medians of ${ROUNDS} interleaved rounds)`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}

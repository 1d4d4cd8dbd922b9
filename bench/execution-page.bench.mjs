// One page of a 10,000-execution table, as the Studio's executions table and skills page ask for
// it: `GET /api/executions` (the HTTP app, in process, through `app.request`) — the first page,
// a page deep in the table (offset 5,000) and a page filtered by skill and status, each with its
// `total` — and `GET /api/skills?stats=1` (success rate and p50/p95 of each skill over its last
// 1,000 executions). The baseline is raw better-sqlite3 on the same file: the same page's rows
// selected with a prepared statement, no JSON. Reports medians and the ratio to the baseline.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { formatMs, printTable, silentLogger, temporaryDirectory, verdict } from "./lib/fixtures.mjs";
import { median } from "./lib/measure.mjs";

const ROWS = Number(process.env.BENCH_PAGE_ROWS ?? 10_000);
const SKILLS = 10;
const REPEATS = Number(process.env.BENCH_PAGE_REPEATS ?? 30);
/** What "stays responsive" means for one page: well under a frame budget of a click. */
const TARGET_PAGE_MS = 50;

const { createSkillHost } = await import("@skillbox/core");
const { createHttpApp } = await import("@skillbox/server");

const temporary = temporaryDirectory("skillbox-bench-execution-page");
try {
  const host = createSkillHost({ database: join(temporary.path, "skillbox.db"), logger: silentLogger() });
  host.executor.registerHandler("work", (input) => {
    if (input.fail) throw new Error("asked to fail");
    return { done: input.index };
  });
  for (let index = 0; index < SKILLS; index++) {
    host.registry.register({ name: `skill-${index}`, version: "1.0.0", handler: "work" });
  }
  // Another owner's rows in the same table: every query is owner-scoped and must skip them.
  const seeded = performance.now();
  for (let start = 0; start < ROWS; start += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, ROWS - start) }, (_, offset) => {
        const index = start + offset;
        return host.executor.execute(
          `skill-${index % SKILLS}`,
          { index, fail: index % 10 === 0 },
          { apiKeyId: index % 5 === 0 ? "alice" : "public", sessionId: `session-${index % 7}` },
        );
      }),
    );
  }
  const seedMs = performance.now() - seeded;
  const app = createHttpApp({ registry: host.registry, executor: host.executor, a2a: false });
  const raw = host.registry.database.prepare(
    `SELECT id, skill_name, skill_version, status, error_code, duration_ms, created_at
     FROM skill_executions WHERE api_key_id = ? ORDER BY rowid DESC LIMIT 50 OFFSET ?`,
  );

  const time = async (operation) => {
    for (let warm = 0; warm < 3; warm++) await operation();
    const durations = [];
    for (let index = 0; index < REPEATS; index++) {
      const started = performance.now();
      await operation();
      durations.push(performance.now() - started);
    }
    return median(durations);
  };
  const get = (path) => async () => {
    const response = await app.request(`http://localhost${path}`);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  };

  const firstRaw = await time(() => raw.all("public", 0));
  const deepRaw = await time(() => raw.all("public", 5000));
  const cases = [
    ["first page, GET /api/executions?limit=50", "/api/executions?limit=50", firstRaw],
    ["deep page, ?limit=50&offset=5000", "/api/executions?limit=50&offset=5000", deepRaw],
    [
      "filtered, ?skill=skill-3&status=error,success",
      "/api/executions?limit=50&skill=skill-3&status=error,success",
      firstRaw,
    ],
    ["GET /api/skills?stats=1 (10 skills)", "/api/skills?stats=1", undefined],
  ];
  const rows = [["case", "median", "vs raw SQLite page", "entries"]];
  rows.push(["raw better-sqlite3 page (baseline)", formatMs(firstRaw), "1.0x", "50"]);
  let worst = 0;
  for (const [label, path, baseline] of cases) {
    const body = await get(path)();
    const ms = await time(get(path));
    if (baseline !== undefined) worst = Math.max(worst, ms);
    const entries = body.executions?.length ?? body.skills.length;
    rows.push([
      label,
      formatMs(ms),
      baseline === undefined ? "-" : `${(ms / baseline).toFixed(1)}x`,
      String(entries),
    ]);
  }
  console.log(
    `one page of a ${ROWS.toLocaleString("en-US")}-execution table (${SKILLS} skills, a fifth of the rows another owner's; seeded in ${formatMs(seedMs)})`,
  );
  printTable(rows);
  console.log(
    `  slowest page = ${formatMs(worst)} (target <= ${TARGET_PAGE_MS} ms) ${verdict(worst <= TARGET_PAGE_MS)}`,
  );
  await host.close();
} finally {
  temporary.cleanup();
}

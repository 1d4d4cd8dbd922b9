// A host process for the kill -9 test (host-crash.test.ts). It imports the built package (dist),
// as a deployed host would, and registers three skills in code:
//   slow             runs until its execution is aborted (first run) or briefly (second run)
//   slow-idempotent  the same, declared safe to rerun after a crash (`idempotent: true`)
//   needs-approval   `approval: "required"`: stops at awaiting_approval until someone decides
// Every handler appends one JSON line { executionId, pid, skill } to the side file as it starts,
// synchronously, so the test can count how many times each execution's handler ran, and where.
//
// Usage: node crash-host.mjs '<options-json>'   options: { mode, database, sideFile, count? }
//   mode "first":  submits `count` executions of each skill (needs-approval first), then prints
//                  {"ready":…} once, read through a second connection (what survives a kill),
//                  one execution of each slow skill is running, the others queued and every
//                  needs-approval one awaiting_approval; then idles until it is killed.
//   mode "second": the restarted host on the same file; runs the queue, follows events(id) of
//                  every execution it finds, prints {"event":…} for each and {"eventsEnded":id}
//                  when a stream ends, after {"started":…}; idles until it is killed.
import { appendFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { createSkillHost, openDatabase } from "@skillbox/core";

const { mode, database, sideFile, count = 3 } = JSON.parse(process.argv[2] ?? "{}");
if ((mode !== "first" && mode !== "second") || typeof database !== "string" || typeof sideFile !== "string") {
  process.stderr.write(`usage: node crash-host.mjs '{"mode":"first"|"second","database":…,"sideFile":…}'\n`);
  process.exit(2);
}

const SKILLS = ["needs-approval", "slow", "slow-idempotent"];
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const nothing = () => {};

// Two at a time, one per skill: the needs-approval ones pass through one slot on their way to
// awaiting_approval, then one execution of each slow skill holds a slot and the rest stay queued.
const host = createSkillHost({
  database,
  logger: { debug: nothing, info: nothing, warn: nothing, error: nothing },
  queue: { concurrency: 2, perSkillConcurrency: 1, pollIntervalMs: 50 },
});

// Identical definitions in both runs, so the restarted host's registration writes nothing.
const common = { version: "1.0.0", apiKeyId: "system", timeoutMs: 10 * 60_000 };
host.registry.register({ ...common, name: "slow", handler: "slow", description: "Runs until aborted" });
host.registry.register({
  ...common,
  name: "slow-idempotent",
  handler: "slow-idempotent",
  description: "Runs until aborted; safe to rerun",
  idempotent: true,
});
host.registry.register({
  ...common,
  name: "needs-approval",
  handler: "needs-approval",
  description: "Runs once approved",
  approval: "required",
});

const started = new Set();
for (const skill of SKILLS) {
  host.executor.registerHandler(skill, async (_input, ctx) => {
    appendFileSync(
      sideFile,
      `${JSON.stringify({ executionId: ctx.executionId, pid: process.pid, skill })}\n`,
    );
    started.add(ctx.executionId);
    // First run: never finish on its own, so the kill finds it running. Second run: finish.
    if (mode === "first") await untilAborted(ctx.signal);
    else await delay(10);
    return { ranIn: process.pid };
  });
}

// Keep the process alive whatever the executor does with its timers.
setInterval(nothing, 60_000);

if (mode === "first") await submitAndReport();
else followEvents();

async function submitAndReport() {
  const ids = Object.fromEntries(SKILLS.map((skill) => [skill, []]));
  for (const skill of SKILLS) {
    for (let index = 0; index < count; index++) {
      ids[skill].push(await host.executor.submit(skill, { index }));
    }
  }
  // Another connection sees only committed rows: the state a kill leaves behind.
  const reader = openDatabase({ path: database });
  const statusOf = reader.prepare("SELECT status FROM skill_executions WHERE id = ?").pluck();
  const readState = () => {
    const statuses = Object.fromEntries(
      SKILLS.map((skill) => [skill, ids[skill].map((id) => statusOf.get(id))]),
    );
    // Each slow skill: one running (its handler started, so its line is in the side file), the rest queued.
    const slowSettled = ["slow", "slow-idempotent"].every((skill) => {
      const running = ids[skill].filter((_, index) => statuses[skill][index] === "running");
      const queued = statuses[skill].filter((status) => status === "queued");
      return running.length === 1 && started.has(running[0]) && queued.length === count - 1;
    });
    const settled =
      slowSettled && statuses["needs-approval"].every((status) => status === "awaiting_approval");
    return { settled, statuses };
  };
  let last = "";
  for (;;) {
    const { settled, statuses } = readState();
    // Each change of state, for the test's message should it never settle.
    const state = JSON.stringify(statuses);
    if (state !== last) print({ state: statuses });
    last = state;
    if (settled) {
      print({ ready: true, pid: process.pid, ids, statuses });
      return;
    }
    await delay(25);
  }
}

function followEvents() {
  const ids = host.database.prepare("SELECT id FROM skill_executions ORDER BY rowid").pluck().all();
  for (const id of ids) {
    (async () => {
      for await (const event of host.executor.events(id)) {
        print({
          event: {
            type: event.type,
            executionId: event.executionId,
            status: event.type === "progress" ? undefined : (event.status ?? event.execution.status),
          },
        });
      }
      print({ eventsEnded: id });
    })().catch((error) => {
      process.stderr.write(`events(${id}) failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    });
  }
  print({ started: true, pid: process.pid, ids });
}

function untilAborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

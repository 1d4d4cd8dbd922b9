// Hot reload latency: from just before an edit of a skill's handler is written to the moment the
// executor runs the new version, against chokidar's own latency from the same kind of write to
// its `change` event (a plain watcher on a second folder, same options as the loader's). The two
// are interleaved, alternating which goes first, so machine noise hits both alike.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { createSkillHost } from "@skillbox/core";
import { watchSkills } from "@skillbox/loader";
import { watch } from "chokidar";
import {
  formatMs,
  handlerReturning,
  printTable,
  silentLogger,
  temporaryDirectory,
  verdict,
  writeSkillPackage,
} from "./lib/fixtures.mjs";
import { median, percentile } from "./lib/measure.mjs";

const EDITS = Number(process.env.BENCH_EDITS ?? 200);
const WARMUP_EDITS = Number(process.env.BENCH_WARMUP_EDITS ?? 10);
/**
 * Quiet time after each measured edit. Over 50 ms: chokidar drops (does not delay) a `change` of a
 * path within 50 ms of the last one it emitted for that path, so closer edits would go unseen.
 */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 60);
const TARGET_MS = 30;
/** Unset: the loader's default (10 ms). Set to see what the debounce costs. */
const DEBOUNCE_MS =
  process.env.BENCH_DEBOUNCE_MS === undefined ? undefined : Number(process.env.BENCH_DEBOUNCE_MS);

/** A sample that never arrives fails the run instead of hanging it. */
const GIVE_UP_MS = 10_000;

/** Resolves with `promise`, or rejects after GIVE_UP_MS naming what did not happen. */
function within(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${GIVE_UP_MS} ms`)), GIVE_UP_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const temporary = temporaryDirectory("skillbox-bench-hot-reload");
let host;
let skillWatcher;
let rawWatcher;
try {
  const pluginsDir = join(temporary.path, "plugins");
  const root = join(pluginsDir, `${temporary.tag}-counter`);
  const handlerFile = join(root, "index.ts");
  writeSkillPackage(root, { name: "counter", handlerSource: handlerReturning(0) });

  const rawDir = join(temporary.path, "raw");
  const rawFile = join(rawDir, "counter", "index.ts");
  mkdirSync(join(rawDir, "counter"), { recursive: true });
  writeFileSync(rawFile, handlerReturning(0));

  host = createSkillHost({ database: join(temporary.path, "skillbox.db"), logger: silentLogger() });
  skillWatcher = watchSkills({
    dirs: [pluginsDir],
    npm: false,
    registry: host.registry,
    executor: host.executor,
    ...(DEBOUNCE_MS === undefined ? {} : { debounceMs: DEBOUNCE_MS }),
  });
  // Where the time goes: when the watcher starts the reload (`syncPackage`) and when it is done.
  const syncPackage = skillWatcher.loader.syncPackage.bind(skillWatcher.loader);
  let syncStarted;
  let syncEnded;
  let reloadedAt;
  skillWatcher.loader.syncPackage = async (packageRoot) => {
    syncStarted ??= performance.now();
    try {
      return await syncPackage(packageRoot);
    } finally {
      syncEnded ??= performance.now();
    }
  };
  const reloadErrors = [];
  skillWatcher.on("error", (failed) => reloadErrors.push(failed));
  const report = await skillWatcher.ready();
  if (report.loaded.length !== 1) throw new Error(`expected 1 skill loaded, got ${JSON.stringify(report)}`);

  // The same options as watchSkills uses for its own chokidar watcher.
  rawWatcher = watch(rawDir, {
    ignoreInitial: true,
    ignored: (path) => /[\\/](node_modules|\.git)([\\/]|$)/.test(path),
  });
  await new Promise((resolve) => rawWatcher.once("ready", resolve));

  const execute = async () => (await host.executor.execute("counter", { value: 0 })).output;
  if ((await execute()) !== 0) throw new Error("the first version does not answer 0");

  /** Write → new version executable: wait for `reloaded`, then confirm by executing (poll if stale). */
  const skillboxEdit = async (version) => {
    const reloaded = new Promise((resolve) => {
      const listener = (loaded) => {
        if (loaded.root !== root) return;
        reloadedAt = performance.now();
        skillWatcher.off("reloaded", listener);
        resolve();
      };
      skillWatcher.on("reloaded", listener);
    });
    syncStarted = undefined;
    syncEnded = undefined;
    const started = performance.now();
    writeFileSync(handlerFile, handlerReturning(version));
    await within(reloaded, `the reload of edit ${version} (errors: ${JSON.stringify(reloadErrors)})`);
    while ((await execute()) !== version) {
      if (performance.now() - started > GIVE_UP_MS) throw new Error(`edit ${version} never became callable`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ended = performance.now();
    await skillWatcher.idle();
    return {
      total: ended - started,
      untilSync: syncStarted - started,
      sync: syncEnded - syncStarted,
      firstCall: ended - reloadedAt,
    };
  };

  /** Write → chokidar `change` event for that file. */
  const rawEdit = async (version) => {
    const changed = new Promise((resolve) => {
      const listener = (path) => {
        if (path !== rawFile) return;
        rawWatcher.off("change", listener);
        resolve();
      };
      rawWatcher.on("change", listener);
    });
    const started = performance.now();
    writeFileSync(rawFile, handlerReturning(version));
    await within(changed, `chokidar's change event for raw edit ${version}`);
    return performance.now() - started;
  };

  const skillbox = [];
  const untilSync = [];
  const sync = [];
  const firstCall = [];
  const raw = [];
  for (let edit = 1; edit <= WARMUP_EDITS + EDITS; edit++) {
    const measured = edit > WARMUP_EDITS;
    const order = edit % 2 === 0 ? ["skillbox", "raw"] : ["raw", "skillbox"];
    for (const which of order) {
      if (which === "raw") {
        const elapsed = await rawEdit(edit);
        if (measured) raw.push(elapsed);
      } else {
        const timings = await skillboxEdit(edit);
        if (measured) {
          skillbox.push(timings.total);
          untilSync.push(timings.untilSync);
          sync.push(timings.sync);
          firstCall.push(timings.firstCall);
        }
      }
      await sleep(SETTLE_MS);
    }
  }
  if ((await execute()) !== WARMUP_EDITS + EDITS) throw new Error("the last edit is not the version served");

  const skillboxP50 = median(skillbox);
  const rawP50 = median(raw);
  const difference = skillboxP50 - rawP50;
  const debounce = DEBOUNCE_MS === undefined ? "default 10 ms debounce" : `debounceMs: ${DEBOUNCE_MS}`;
  console.log(
    `hot reload latency (${EDITS} edits of one TypeScript handler, ${WARMUP_EDITS} warm-up edits, ${debounce})`,
  );
  printTable([
    ["", "p50", "p99", "min", "max"],
    ...[
      ["raw chokidar write → change", raw],
      ["skillbox write → new version runs", skillbox],
      ["  of which write → reload starts", untilSync],
      ["  of which reload (syncPackage)", sync],
      ["  of which `reloaded` → first call returns", firstCall],
    ].map(([label, values]) => [
      label,
      formatMs(median(values)),
      formatMs(percentile(values, 99)),
      formatMs(Math.min(...values)),
      formatMs(Math.max(...values)),
    ]),
  ]);
  console.log(
    `  skillbox p50 − raw chokidar p50 = ${formatMs(difference)} (target <= ${TARGET_MS} ms) ${verdict(difference <= TARGET_MS)}`,
  );
  console.log(`  reload errors: ${reloadErrors.length}`);
  console.log(
    `  (${EDITS} interleaved edits of each, order alternating, ${SETTLE_MS} ms quiet time between)`,
  );
} finally {
  await rawWatcher?.close();
  await skillWatcher?.close();
  await host?.close();
  temporary.cleanup();
}

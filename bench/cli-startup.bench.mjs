// `skillbox --version` from process start to exit, against a bare `node -e ""` start on the same
// machine (rounds interleaved so noise hits both alike). The version answer must not load the
// program, core, SQLite or the loader: target under 250 ms, and under 3x a bare Node start.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { formatMs, printTable, verdict } from "./lib/fixtures.mjs";
import { median } from "./lib/measure.mjs";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const TARGET_MS = 250;
const TARGET_RATIO = 3;
const bin = fileURLToPath(new URL("../packages/cli/bin/skillbox.mjs", import.meta.url));

function timed(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 30_000 });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

const samples = { node: [], version: [], help: [] };
for (let round = 0; round < ROUNDS; round++) {
  const cases = [
    ["node", () => timed(["-e", ""])],
    ["version", () => timed([bin, "--version"])],
    ["help", () => timed([bin, "--help"])],
  ];
  for (const [name, run] of round % 2 === 0 ? cases : [...cases].reverse()) samples[name].push(run().ms);
}
const node = median(samples.node);
const version = median(samples.version);
const help = median(samples.help);
console.log("skillbox startup (process start → exit)");
printTable([
  ["command", "time", "× node"],
  ["node -e ''", formatMs(node), "1.00x"],
  ["skillbox --version", formatMs(version), `${(version / node).toFixed(2)}x`],
  ["skillbox --help (loads every command)", formatMs(help), `${(help / node).toFixed(2)}x`],
]);
console.log(
  `  --version: ${formatMs(version)} (target < ${formatMs(TARGET_MS)}) ${verdict(version < TARGET_MS)}, ` +
    `${(version / node).toFixed(2)}x node (target < ${TARGET_RATIO}x) ${verdict(version / node < TARGET_RATIO)}`,
);
console.log(`  (medians of ${ROUNDS} interleaved rounds)`);

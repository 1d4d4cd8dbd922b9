// Memory of MCP sessions that are never ended: `initialize` requests sent to the Streamable HTTP
// handler (`createMcpHttpHandler`, in process) by clients that never send DELETE. Cases, each in
// a fresh child process (with --expose-gc): the baseline opens 100 sessions for one owner (its
// cap); the flood opens 10,000 for one owner, and 10,000 spread over 200 owners with
// `maxSessions: 1,000`. Reports the sessions kept (the bound, checked) and the RSS after a full
// gc beyond the baseline's. Before the caps, 10,000 sessions were all kept (484 MB).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatMb, printTable, silentLogger, temporaryDirectory, verdict } from "./lib/fixtures.mjs";

const INITIALIZATIONS = Number(process.env.BENCH_MCP_SESSIONS ?? 10_000);
/**
 * RSS beyond the baseline's, with as many sessions kept, that still counts as bounded after the
 * one-owner flood: what is left is allocator slack of the sessions that were opened and ended.
 */
const TARGET_GROWTH_BYTES = 32 * 1024 * 1024;
const CASES = {
  baseline: { initializations: 100, owners: 1, options: {} },
  "one owner": { initializations: INITIALIZATIONS, owners: 1, options: {} },
  "200 owners": { initializations: INITIALIZATIONS, owners: 200, options: { maxSessions: 1_000 } },
};

const [, , role, name, database] = process.argv;
if (role === "--child") await child(name, database);
else await parent();

async function parent() {
  const temporary = temporaryDirectory("skillbox-bench-mcp-sessions");
  try {
    const results = {};
    for (const caseName of Object.keys(CASES)) {
      const result = spawnSync(
        process.execPath,
        [
          "--expose-gc",
          fileURLToPath(import.meta.url),
          "--child",
          caseName,
          join(temporary.path, `${caseName.replace(" ", "-")}.db`),
        ],
        { encoding: "utf8", timeout: 300_000, killSignal: "SIGKILL" },
      );
      if (result.status !== 0)
        throw new Error(`${caseName} failed (${result.signal ?? result.status}): ${result.stderr}`);
      results[caseName] = JSON.parse(result.stdout.trim().split("\n").pop());
    }
    const baseline = results.baseline;
    console.log(
      `MCP sessions never ended: ${INITIALIZATIONS.toLocaleString("en-US")} initialize requests (default caps: 100 per owner, 10,000 in all)`,
    );
    printTable([
      ["case", "initialize", "sessions kept", "expected", "RSS after gc", "beyond baseline"],
      ...Object.entries(results).map(([caseName, result]) => [
        caseName,
        result.initializations.toLocaleString("en-US"),
        result.kept.toLocaleString("en-US"),
        result.expected.toLocaleString("en-US"),
        formatMb(result.rss),
        caseName === "baseline" ? "-" : formatMb(result.rss - baseline.rss),
      ]),
    ]);
    const boundsHeld = Object.values(results).every((result) => result.kept === result.expected);
    const flood = results["one owner"].rss - baseline.rss;
    const spread = results["200 owners"];
    const perSession = (spread.rss - baseline.rss) / (spread.kept - baseline.kept);
    console.log(`  sessions kept = the cap in every case ${verdict(boundsHeld)}`);
    console.log(
      `  one owner, 100x the initializations, as many sessions kept: RSS beyond baseline = ${formatMb(flood)} (target <= ${formatMb(TARGET_GROWTH_BYTES)}) ${verdict(flood <= TARGET_GROWTH_BYTES)}`,
    );
    console.log(
      `  each kept session costs ~${(perSession / 1024).toFixed(0)} KB (200 owners: ${spread.kept - baseline.kept} more sessions than the baseline)`,
    );
  } finally {
    temporary.cleanup();
  }
}

async function child(caseName, database) {
  const { createSkillHost } = await import("@skillbox/core");
  const { createMcpHttpHandler } = await import("@skillbox/server");
  const { initializations, owners, options } = CASES[caseName];
  const host = createSkillHost({ database, logger: silentLogger() });
  host.registry.register({ name: "echo", version: "1.0.0", handler: "echo" });
  host.executor.registerHandler("echo", (input) => input);
  const handler = createMcpHttpHandler({ registry: host.registry, executor: host.executor, ...options });
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  });
  for (let index = 0; index < initializations; index++) {
    const response = await handler.handle(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body,
      }),
      `owner-${index % owners}`,
    );
    await response.text();
  }
  for (let pass = 0; pass < 4; pass++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { rss } = process.memoryUsage();
  const kept = handler.sessionCount();
  const expected = Math.min(initializations, owners * 100, options.maxSessions ?? 10_000);
  await handler.close();
  await host.close();
  console.log(JSON.stringify({ initializations, kept, expected, rss }));
}

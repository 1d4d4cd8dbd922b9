// One start of a process, measured from the inside (spawned by cold-start.bench.mjs, so the RSS
// is this process's own). Prints one JSON line: ms since the process started, peak RSS, details.
//   node cold-start-child.mjs load <pluginsDir> <database> [verify]  loadSkills over every folder
//   node cold-start-child.mjs host <pluginsDir> <database>            import core, open the database
//   node cold-start-child.mjs manifests <pluginsDir>                  plain fs + JSON.parse of manifests
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const [mode, pluginsDir, database, verify] = process.argv.slice(2);
const nothing = () => {};
const silentLogger = { debug: nothing, info: nothing, warn: nothing, error: nothing };
const peakRssBytes = () => process.resourceUsage().maxRSS * 1024;

if (mode === "manifests") {
  let count = 0;
  for (const folder of readdirSync(pluginsDir)) {
    const manifest = JSON.parse(readFileSync(join(pluginsDir, folder, "skill.json"), "utf8"));
    if (typeof manifest.name === "string") count++;
  }
  console.log(JSON.stringify({ ms: performance.now(), peakRss: peakRssBytes(), count }));
} else {
  const { createSkillHost } = await import("@skillbox/core");
  const host = createSkillHost({ database, logger: silentLogger });
  const revision = () =>
    host.database.prepare("SELECT value FROM skillbox_meta WHERE key = 'skills_revision'").pluck().get();
  if (mode === "host") {
    const result = { ms: performance.now(), peakRss: peakRssBytes(), count: 0 };
    await host.close();
    console.log(JSON.stringify(result));
  } else {
    const revisionBefore = revision();
    const { loadSkills } = await import("@skillbox/loader");
    const report = await loadSkills({
      dirs: [pluginsDir],
      npm: false,
      registry: host.registry,
      executor: host.executor,
    });
    const ms = performance.now();
    const peakRss = peakRssBytes();
    const result = {
      ms,
      peakRss,
      count: report.loaded.length,
      registered: host.registry.list().length,
      failed: report.failed.length,
      firstFailure: report.failed[0]?.message,
      // Bumped by a trigger on every write to `skills`: unchanged means nothing was rewritten.
      rewrites: revision() - revisionBefore,
    };
    if (verify === "verify") {
      // After the figures: the first call imports that one handler.
      const execution = await host.executor.execute("bench-skill-0000", { value: 1 });
      result.verified = execution.status === "success" && execution.output === 1;
    }
    report.loader.close();
    await host.close();
    console.log(JSON.stringify(result));
  }
}

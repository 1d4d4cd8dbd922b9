// A skills host in a page of code (`skillbox dev` is the full version): serves the packages of
// the folders named on the command line (default ./plugins) and installed npm skill packages over
// the embedded SQLite database, hot-reloading edits, and logging loads, reloads, warnings (a
// folder that does not exist), errors and executions. `--once` runs the demo and exits.
import { resolveDatabasePath, skillExecutor, skillRegistry } from "@skillbox/core";
import { watchSkills } from "@skillbox/loader";
import { createContainerRuntime } from "@skillbox/sandbox";

const once = process.argv.includes("--once");
const dirs = process.argv.slice(2).filter((argument) => !argument.startsWith("--"));
const log = (message) => console.log(`${new Date().toISOString().slice(11, 23)} ${message}`);

// Skills with `runtime: "container"` run in sandboxes; the engine is found on their first run.
skillExecutor.registerRuntime(createContainerRuntime());

const watcher = watchSkills({ dirs: dirs.length > 0 ? dirs : ["./plugins"] });
watcher.on("loaded", (entry) => log(`loaded    ${entry.kind} ${entry.name}@${entry.version ?? "-"}`));
watcher.on("reloaded", (entry) => log(`reloaded  ${entry.kind} ${entry.name}@${entry.version ?? "-"}`));
watcher.on("removed", (entry) => log(`removed   ${entry.kind} ${entry.name}@${entry.version ?? "-"}`));
watcher.on("error", (failure) => log(`error     ${failure.code}: ${failure.message}`));
// A folder that does not exist is announced here: it would otherwise serve nothing, silently.
watcher.on("warning", (warning) => log(`warning   ${warning.code}: ${warning.message}`));
skillExecutor.on("finished", (execution) =>
  log(
    `executed  ${execution.skillName}@${execution.skillVersion} → ${execution.status}` +
      `${execution.error ? ` ${execution.error.code}` : ""} (${execution.duration?.toFixed(1)} ms)`,
  ),
);

const report = await watcher.ready();
log(`database  ${resolveDatabasePath()}`);
for (const entry of report.loaded) log(`loaded    ${entry.kind} ${entry.name}@${entry.version ?? "-"}`);
for (const failure of report.failed) log(`failed    ${failure.code}: ${failure.message}`);
log(
  `serving   ${skillRegistry.list().length} skill version(s); edit a file under ${watcher.loader.dirs.join(", ")}`,
);

if (skillRegistry.getSkill("echo") !== undefined) {
  const result = await skillExecutor.execute(
    "echo",
    { msg: "hello from the skills host" },
    { apiKeyId: "demo" },
  );
  log(`echo says ${JSON.stringify(result.output)}`);
}

const stop = async () => {
  await watcher.close();
  await skillExecutor.close();
  // Exit once the last line is flushed (stdout may be a pipe).
  process.stdout.write(`${new Date().toISOString().slice(11, 23)} stopped\n`, () => process.exit(0));
};
if (once) await stop();
process.once("SIGINT", stop);
process.once("SIGTERM", stop);

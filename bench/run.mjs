// Runs every bench/*.bench.mjs file (or those named on the command line) one after another.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((file) => file.endsWith(".bench.mjs"))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.includes(name)))
  .sort();
let failed = false;
for (const file of files) {
  console.log(`\n▶ ${file}`);
  const result = spawnSync(process.execPath, ["--expose-gc", join(here, file)], { stdio: "inherit" });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);

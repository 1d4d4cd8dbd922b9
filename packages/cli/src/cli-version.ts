import { readFileSync } from "node:fs";

/** The version of the `skillbox` package, read once from its package.json (beside `dist/`). */
export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

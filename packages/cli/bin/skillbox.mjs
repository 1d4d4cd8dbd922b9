#!/usr/bin/env node
// The `skillbox` command. Runs the built CLI (`pnpm build` first in a checkout).
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// The `skillbox` command. Runs the built CLI (`pnpm build` first in a checkout).
import { main } from "../dist/main.js";

/** How long the process may linger once the command finished and closed everything it opened. */
const EXIT_GRACE_MS = 2_000;

process.exitCode = await main(process.argv.slice(2));
// The command has closed its host (executions, close handlers, pools, sandboxes, database), so
// the process normally ends here. What may still hold it is an inline handler that ignored its
// cancellation (a timer, a socket): inline cancellation is cooperative, and a command that has
// answered or was asked to stop must not hang on it. Unref'd: a clean exit never waits for it.
setTimeout(() => {
  process.stderr.write(
    "skillbox: exiting although something still holds the process (a handler that ignored its cancellation?)\n",
  );
  process.exit();
}, EXIT_GRACE_MS).unref();

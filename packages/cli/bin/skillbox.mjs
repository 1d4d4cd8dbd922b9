#!/usr/bin/env node
// The `skillbox` command. Runs the built CLI (`pnpm build` first in a checkout).
import Module from "node:module";

// pnpm's bin shim sets NODE_PATH to the CLI's own (hoisted) dependencies. Node would then hand
// them to every skill the CLI loads: a handler importing a `zod` it never declared would work
// under `pnpm exec skillbox` and fail under `node …/skillbox.mjs` or `npx`. A skill's imports
// resolve from its own package only, so the variable goes (worker threads inherit the
// environment) and Node's global module paths, read from it at start-up, are read again.
// Before the CLI is imported: nothing may resolve through NODE_PATH first.
if (process.env.NODE_PATH !== undefined) {
  delete process.env.NODE_PATH;
  Module._initPaths();
}

const { main } = await import("../dist/main.js");

/** How long the process may linger once the command finished and closed everything it opened. */
const EXIT_GRACE_MS = 2_000;

/**
 * Resolves once everything written to `stream` so far has been handed to the OS: stdout and
 * stderr are asynchronous pipes, so a slow reader (`| less`, a paused parent) may hold megabytes
 * that `process.exit()` would throw away. A reader that went away resolves it too (an error).
 */
function flushed(stream) {
  if (stream.writableLength === 0 || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => stream.write("", () => resolve()));
}

process.exitCode = await main(process.argv.slice(2));
// Output is the command's answer: the exit delay only starts once it has been taken.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
// The command has closed its host (executions, close handlers, pools, sandboxes, database) and
// its output is taken, so the process normally ends here. What may still hold it is an inline
// handler that ignored its cancellation (a timer, a socket): inline cancellation is cooperative,
// and a command that has answered or was asked to stop must not hang on it. Unref'd: a clean
// exit never waits for it.
setTimeout(() => {
  process.stderr.write(
    "skillbox: exiting although something still holds the process (a handler that ignored its cancellation?)\n",
  );
  process.exit();
}, EXIT_GRACE_MS).unref();

import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

/**
 * Tests run against the TypeScript sources of the workspace packages (their exports map this
 * condition to `src/`); child processes spawned by tests use the built dist. A name of our own,
 * because some dependencies publish a plain `source` condition that points at files Node cannot run.
 */
const SOURCE_CONDITION = "@skillbox/source";

export default defineConfig({
  // Tests run in Vite's server-side environment, which resolves with the `ssr` conditions — but
  // not Vite's `module`: a package's `module` build (OpenTelemetry's has extension-less imports) is
  // for bundlers, and dependencies run in Node as they are, so they resolve as Node resolves them.
  ssr: {
    resolve: {
      conditions: [
        SOURCE_CONDITION,
        ...defaultServerConditions.filter((condition) => condition !== "module"),
      ],
    },
  },
  test: {
    include: [
      "packages/*/test/**/*.test.ts",
      "plugins/*/test/**/*.test.ts",
      "examples/*/test/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});

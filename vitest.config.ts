import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources; child processes spawned by tests use the built dist.
    conditions: ["source"],
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

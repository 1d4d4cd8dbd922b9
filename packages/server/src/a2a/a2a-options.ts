import type { TaskStore } from "@a2a-js/sdk/server";

/** How `createHttpApp` serves A2A (its `a2a` option; `false` turns A2A off). */
export interface A2aOptions {
  /**
   * The URL clients reach this server at, such as `https://skills.example.com` (a path prefix is
   * kept). The agent card points clients at `<publicUrl>/a2a`. Default: the origin of each card
   * request, which is wrong behind a proxy that rewrites the host — set it there.
   */
  publicUrl?: string;
  /** The agent's name on its card (default `Skillbox`). */
  name?: string;
  /** The agent's description on its card (default: how to pick a skill and send its input). */
  description?: string;
  /** The agent's version on its card (default: the version of `@skillbox/server`). */
  version?: string;
  /**
   * Tasks no execution backs (a message naming an unknown skill) kept in memory for `tasks/get`
   * (default 1000). Every other task is an execution, read from the database.
   */
  maxTasks?: number;
  /** Serialised bytes those in-memory tasks hold together (default 64 MiB). */
  maxTaskBytes?: number;
  /**
   * Serialised bytes one task of a `tasks/list` page holds (default 1 MiB): its larger parts
   * become a reference to `GET /api/executions/<executionId>`.
   */
  maxBytesPerTask?: number;
  /**
   * The task store to use instead of the `ExecutionTaskStore` (tasks read from the executions
   * in the database), such as an in-memory `BoundedTaskStore` or a store of your own. Tasks
   * then live as long as that store keeps them; executions stay in the database either way.
   */
  taskStore?: TaskStore;
}

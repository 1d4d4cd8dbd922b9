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
  /** Tasks kept in memory for `tasks/get` (default 1000); see `BoundedTaskStore`. */
  maxTasks?: number;
  /** Serialised bytes all kept tasks hold together (default 64 MiB); see `BoundedTaskStore`. */
  maxTaskBytes?: number;
  /**
   * Serialised bytes one finished task keeps (default 1 MiB): its larger parts become a
   * reference to `GET /api/executions/<executionId>`; see `BoundedTaskStore`.
   */
  maxBytesPerTask?: number;
  /**
   * The task store to use instead of a `BoundedTaskStore` with the limits above, such as one
   * you keep a handle on to read its `size` and `retainedBytes`, or a store of your own.
   */
  taskStore?: TaskStore;
}

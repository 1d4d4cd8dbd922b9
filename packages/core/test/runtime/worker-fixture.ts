import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import type { Skill, SkillHost, SkillHostOptions, SkillRegistration } from "@skillbox/core";
import type { WorkerRuntimeOptions } from "@skillbox/core/internal";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach } from "vitest";

/** A fresh temp tree per test and the hosts a test opened, all removed after each test. */
export interface WorkerFixture {
  /** The current test's tree (handler modules live under `handlers/`). */
  readonly tree: TemporaryTree;
  /** A host whose worker pool has two threads unless the test says otherwise. */
  newHost(
    worker?: WorkerRuntimeOptions,
    options?: Omit<SkillHostOptions, "database" | "worker">,
  ): TemporaryHost;
  /** Writes a handler module into the tree (under `handlers/`) and returns its absolute path. */
  handlerFile(relativePath: string, ...lines: string[]): string;
}

/** Registers the hooks of a worker test file: call once at the top level of the file. */
export function useWorkerFixture(): WorkerFixture {
  let tree: TemporaryTree | undefined;
  const hosts: TemporaryHost[] = [];
  const current = (): TemporaryTree => {
    if (tree === undefined) throw new Error("the worker fixture is used outside a test");
    return tree;
  };

  beforeEach(() => {
    tree = createTemporaryTree("skillbox-worker-");
    // Handler modules that import `@skillbox/core` (SkillboxError, defineSkill) resolve it from here.
    tree.linkPackages("@skillbox/core");
  });

  afterEach(async () => {
    // executor.close() destroys the pools: no worker thread outlives its test.
    for (const host of hosts.splice(0)) await host.dispose();
    tree?.cleanup();
    tree = undefined;
  });

  return {
    get tree() {
      return current();
    },
    newHost(worker = {}, options = {}) {
      const host = createTemporaryHost({ ...options, worker: { maxThreads: 2, ...worker } });
      hosts.push(host);
      return host;
    },
    handlerFile(relativePath, ...lines) {
      return current().write(`handlers/${relativePath}`, `${lines.join("\n")}\n`);
    },
  };
}

/** Registers a `runtime: "worker"` skill whose handler is the module at `file`. */
export function registerWorker(
  host: SkillHost,
  name: string,
  file: string,
  registration: Partial<SkillRegistration> = {},
): Skill {
  return host.registry.register({
    name,
    version: "1.0.0",
    apiKeyId: "public",
    handler: pathToFileURL(file).href,
    runtime: "worker",
    ...registration,
  });
}

/**
 * Polls `condition` until it holds. Worker threads signal through files; the timeout only turns
 * a signal that never comes into a readable failure, it never paces a test.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Lines of a log file (none when it does not exist yet). */
export function linesOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** A handler module that returns the id of the thread it ran on. */
export const THREAD_ID = [
  'import { threadId } from "node:worker_threads";',
  "export default function whichThread() {",
  "  return threadId;",
  "}",
];

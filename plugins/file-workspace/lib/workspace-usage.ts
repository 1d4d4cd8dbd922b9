import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/** What one owner's workspace holds: the bytes of its regular files and how many entries (files, folders, others) it has. */
export interface WorkspaceUsage {
  bytes: number;
  entries: number;
}

/** Options of {@link WorkspaceUsageCache}. */
export interface WorkspaceUsageCacheOptions {
  /** Most workspaces whose usage is kept; the least recently used idle one is dropped (and rescanned when next used). Default 1024. */
  maxWorkspaces?: number;
  /** After this long a workspace is scanned again, so changes made outside the skill are picked up. Default 10 minutes. */
  rescanAfterMs?: number;
}

interface CachedWorkspace {
  usage: WorkspaceUsage | undefined;
  scannedAt: number;
  /** The tail of this workspace's queue of changes; they run one at a time. */
  queue: Promise<unknown>;
  pending: number;
}

/** What a change reports back: its result and how it moved the usage. */
export interface UsageChange<Result> {
  result: Result;
  delta: WorkspaceUsage;
}

/**
 * Each workspace's usage, scanned once and then kept up to date by every write and delete, so a
 * write costs a few `lstat`s instead of a walk of the whole tree. Changes to one workspace run one
 * at a time: a check and the change it allows cannot interleave with another's, so concurrent
 * writes cannot together pass the quota. A change that fails midway (a folder made, the file not
 * written) drops the cached usage, and the next change scans again; one refused before it
 * touched the disk keeps it, so a tenant at its cap cannot make every refusal a walk of the tree.
 * One process's view: writes by another process to the same folders are seen after `rescanAfterMs`.
 */
class WorkspaceUsageCache {
  /** How many full scans ran (for tests: the write path must not walk the tree each time). */
  scans = 0;
  private readonly workspaces = new Map<string, CachedWorkspace>();
  private readonly maxWorkspaces: number;
  private readonly rescanAfterMs: number;

  constructor(options: WorkspaceUsageCacheOptions = {}) {
    this.maxWorkspaces = options.maxWorkspaces ?? 1024;
    this.rescanAfterMs = options.rescanAfterMs ?? 10 * 60_000;
  }

  /**
   * Runs `change` with `workspace`'s current usage once the changes queued before it ended, and
   * applies the delta it returns. `change` calls `modifying()` before its first step that can
   * leave the disk partly changed (one that either happens whole or fails with nothing done,
   * like `unlink`, needs no call); a change that throws after that leaves the usage to be
   * rescanned, one that throws before (a refusal) keeps it.
   */
  change<Result>(
    workspace: string,
    signal: AbortSignal,
    change: (usage: Readonly<WorkspaceUsage>, modifying: () => void) => Promise<UsageChange<Result>>,
  ): Promise<Result> {
    const entry = this.entryOf(workspace);
    entry.pending += 1;
    const run = entry.queue.then(async () => {
      signal.throwIfAborted();
      if (entry.usage === undefined || Date.now() - entry.scannedAt > this.rescanAfterMs) {
        entry.usage = await this.scan(workspace, signal);
        entry.scannedAt = Date.now();
      }
      let modified = false;
      try {
        const { result, delta } = await change(entry.usage, () => {
          modified = true;
        });
        entry.usage = {
          bytes: Math.max(0, entry.usage.bytes + delta.bytes),
          entries: Math.max(0, entry.usage.entries + delta.entries),
        };
        return result;
      } catch (error) {
        if (modified) entry.usage = undefined;
        throw error;
      }
    });
    entry.queue = run.catch(() => {});
    void entry.queue.then(() => {
      entry.pending -= 1;
    });
    return run;
  }

  private entryOf(workspace: string): CachedWorkspace {
    let entry = this.workspaces.get(workspace);
    if (entry !== undefined) {
      // Most recently used last, so eviction takes the oldest first.
      this.workspaces.delete(workspace);
      this.workspaces.set(workspace, entry);
      return entry;
    }
    entry = { usage: undefined, scannedAt: 0, queue: Promise.resolve(), pending: 0 };
    this.workspaces.set(workspace, entry);
    if (this.workspaces.size > this.maxWorkspaces) {
      for (const [key, candidate] of this.workspaces) {
        if (this.workspaces.size <= this.maxWorkspaces) break;
        // A workspace with queued changes keeps its queue, or two changes could run at once.
        if (candidate.pending === 0 && candidate !== entry) this.workspaces.delete(key);
      }
    }
    return entry;
  }

  /** Walks the tree once, symlinks not followed. */
  private async scan(folder: string, signal: AbortSignal): Promise<WorkspaceUsage> {
    this.scans += 1;
    const usage: WorkspaceUsage = { bytes: 0, entries: 0 };
    const pending = [folder];
    for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
      signal.throwIfAborted();
      const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        usage.entries += 1;
        const path = join(current, entry.name);
        if (entry.isDirectory()) pending.push(path);
        else if (entry.isFile()) usage.bytes += (await lstat(path).catch(() => undefined))?.size ?? 0;
      }
    }
    return usage;
  }
}

/** The process's usage cache, shared by every instance of the skill (they may share workspace roots). */
export const workspaceUsageCache = new WorkspaceUsageCache();

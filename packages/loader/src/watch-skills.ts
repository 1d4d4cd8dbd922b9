import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { basename, relative, sep } from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { loopTargetOf, MAX_PACKAGE_DEPTH } from "./discovery/is-symlink-loop.js";
import type { LoadReport, SkillLoaderEvents } from "./loader-types.js";
import { PublishedFiles } from "./module/published-files.js";
import { isSkippedName } from "./package-paths.js";
import { SkillLoader, type SkillLoaderOptions } from "./skill-loader.js";
import { WatchedFolderClaims } from "./watched-folder-claims.js";

/** chokidar emits at most one `change` per file in this window and drops the rest. */
const CHOKIDAR_THROTTLE_MS = 50;

/** Options of {@link watchSkills}. */
export interface WatchSkillsOptions extends SkillLoaderOptions {
  /** Quiet time per package before a reload, in ms (default 10): an editor's burst of writes reloads once. */
  debounceMs?: number;
}

/** Events of a watcher: the loader's, plus `ready` once the first load and the file watch are up. */
export interface SkillWatcherEvents extends SkillLoaderEvents {
  ready: [LoadReport];
}

/** What a file holds now, to tell whether it changed since (undefined: gone or unreadable). */
function contentOf(file: string): string | undefined {
  try {
    return createHash("sha256").update(readFileSync(file)).digest("hex");
  } catch {
    return undefined;
  }
}

/**
 * Whether a changed `path` in the top-level package folder `top` can change what the package
 * is: a file its hash covers (see `PublishedFiles` — not `test/`, not what the package does not
 * publish), a folder of it, or a `.npmignore`. Editing a test reloads nothing.
 */
function isPackageContent(top: string, path: string, folder: boolean): boolean {
  if (path === top) return true;
  const inside = relative(top, path);
  const parts = inside.split(sep);
  if (parts.some(isSkippedName)) return parts[parts.length - 1] === ".npmignore";
  const published = PublishedFiles.read(top);
  return folder ? published.includesFolder(inside) : published.includes(inside);
}

/**
 * `loadSkills` plus hot reload: watches the configured folders with chokidar and, for any added,
 * changed or deleted file of a package — manifest, handler, or a module the handler imports —
 * reloads that package only (for a bundle, its members), debounced per package folder and never
 * two reloads of one folder at once. Bad input never stops the watcher: it becomes an `error`
 * event and the last good version stays.
 *
 * Emits the loader's events (`loaded`, `reloaded`, `removed`, `error`, `warning`) and `ready`.
 */
export class SkillWatcher extends EventEmitter<SkillWatcherEvents> {
  /** The loader behind the watcher. */
  readonly loader: SkillLoader;
  private readonly debounceMs: number;
  /** Per top-level package folder: the pending debounce. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly dirty = new Set<string>();
  /** Per top-level package folder: the files changed since its last sync started. */
  private readonly changedFiles = new Map<string, Set<string>>();
  /** Loop and alias links already met, so that chokidar asking again does not sync again. */
  private readonly loopLinks = new Set<string>();
  /** Which path each real folder of a package is watched by: once, however many links reach it. */
  private readonly folderClaims = new WatchedFolderClaims();
  private readonly started: Promise<LoadReport>;
  private readonly closing: Promise<void>;
  private stopWaiting: () => void = () => {};
  private watcher: FSWatcher | undefined;
  private closed = false;
  /** Whether the first scan is done. */
  private watching = false;
  private warming: Promise<void> = Promise.resolve();

  constructor(options: WatchSkillsOptions = {}) {
    super();
    this.loader = new SkillLoader(options);
    this.debounceMs = options.debounceMs ?? 10;
    this.closing = new Promise<void>((resolve) => {
      this.stopWaiting = resolve;
    });
    this.loader.on("loaded", (loaded) => this.emit("loaded", loaded));
    this.loader.on("reloaded", (reloaded) => this.emit("reloaded", reloaded));
    this.loader.on("removed", (removed) => this.emit("removed", removed));
    this.loader.on("warning", (warning) => this.emit("warning", warning));
    this.loader.on("error", (failed) => {
      // An `error` event without a listener would throw: a watcher never takes its host down.
      if (this.listenerCount("error") > 0) this.emit("error", failed);
    });
    this.started = this.start();
    // Surfaced through ready(); never an unhandled rejection.
    this.started.catch(() => {});
  }

  /** Resolves with the first load's report once the watcher is listening. */
  ready(): Promise<LoadReport> {
    return this.started;
  }

  /**
   * Resolves once the background import of every handler (started after `ready`) and every
   * pending reload have finished. After it, a broken edit of any package falls back to the
   * handler already in memory.
   */
  async idle(): Promise<void> {
    await this.started.catch(() => undefined);
    await this.warming;
    while (this.timers.size > 0 || this.running.size > 0) {
      await Promise.allSettled([...this.running.values()]);
      if (this.timers.size > 0) await new Promise((resolve) => setTimeout(resolve, this.debounceMs));
    }
  }

  /** Stops watching and stops serving handlers. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWaiting();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.started.catch(() => undefined);
    await this.watcher?.close();
    await this.warming;
    await Promise.allSettled([...this.running.values()]);
    this.loader.close();
  }

  private async start(): Promise<LoadReport> {
    const report = await this.loader.loadAll();
    const { paths } = this.loader;
    const watcher = watch(this.loader.dirs, {
      ignoreInitial: true,
      // Symlinks are followed (a package may be a link to where it is developed), except folder
      // links that lead back up — two links to `.` would otherwise be walked without end — and
      // second paths to a folder already watched. The hash skips the same links and names the
      // loops (a `SYMLINK_LOOP` warning).
      ignored: (path, stats) => {
        if (/[\\/](node_modules|\.git)([\\/]|$)/.test(path)) return true;
        const top = paths.watchedFolderOf(path);
        if (top === undefined) return false;
        if (loopTargetOf(path, top) === undefined) {
          // Not a loop, but maybe a second path to a folder already watched (a ring of folders
          // linking each other made 3^length paths): watched once, its edits still reload.
          const packageFolder = paths.topFolderOf(path);
          if (packageFolder === undefined || !this.folderClaims.ignores(path, packageFolder, stats))
            return false;
        }
        // A loop link made while watching is an edit of its package like any other: the sync
        // names it. (Those found at start-up are in the first load's report.)
        if (this.watching && !this.loopLinks.has(path)) this.schedule(path, "addDir");
        this.loopLinks.add(path);
        return true;
      },
      // Watched folder, `@scope`, package: then as deep as a package is hashed.
      depth: MAX_PACKAGE_DEPTH + 2,
    });
    this.watcher = watcher;
    watcher.on("all", (event, path) => {
      if (event === "unlinkDir" || event === "unlink") {
        const packageFolder = paths.topFolderOf(path);
        if (packageFolder !== undefined) this.folderClaims.release(path, packageFolder);
      }
      this.schedule(path, event);
    });
    watcher.on("error", (error) => {
      if (this.listenerCount("error") > 0) {
        this.emit("error", { root: "", file: "", code: "WATCH_FAILED", message: String(error) });
      }
    });
    // close() before the watch is up must not wait for a `ready` that never comes.
    await Promise.race([
      new Promise<void>((resolve) => watcher.once("ready", () => resolve())),
      this.closing,
    ]);
    this.watching = true;
    this.warming = this.loader.warmUp();
    this.emit("ready", report);
    return report;
  }

  /** Debounces a sync of the package folder `path` is in, when the change can matter to it. */
  private schedule(path: string, event: string): void {
    if (this.closed) return;
    const top = this.loader.paths.topFolderOf(path);
    if (top === undefined || basename(top).startsWith(".")) return;
    if (!isPackageContent(top, path, event === "addDir" || event === "unlinkDir")) return;
    if (event === "change" || event === "add") {
      const changed = this.changedFiles.get(top) ?? new Set<string>();
      changed.add(path);
      this.changedFiles.set(top, changed);
    }
    clearTimeout(this.timers.get(top));
    this.timers.set(
      top,
      setTimeout(() => {
        this.timers.delete(top);
        this.sync(top);
      }, this.debounceMs),
    );
  }

  /** Syncs one top-level package folder (a bundle: with its members), never twice at once. */
  private sync(top: string): void {
    if (this.running.has(top)) {
      this.dirty.add(top);
      return;
    }
    const run = (async () => {
      const changed = [...(this.changedFiles.get(top) ?? [])];
      this.changedFiles.delete(top);
      const before = changed.map(contentOf);
      await this.loader.syncPackage(top);
      // chokidar drops a change that follows another change of the same file within its 50 ms
      // throttle: look at the changed files once more after the window (not the whole package,
      // which the sync hashed once), and sync again if they moved on.
      await new Promise((resolve) => setTimeout(resolve, CHOKIDAR_THROTTLE_MS + 10));
      if (!this.closed && changed.some((file, index) => contentOf(file) !== before[index]))
        this.dirty.add(top);
    })().finally(() => {
      this.running.delete(top);
      if (this.dirty.delete(top) && !this.closed) this.sync(top);
    });
    this.running.set(top, run);
  }
}

/**
 * `loadSkills` plus hot reload (see {@link SkillWatcher}): starts watching at once; `ready()`
 * resolves with the first load's report once the watcher listens.
 */
export function watchSkills(options: WatchSkillsOptions = {}): SkillWatcher {
  return new SkillWatcher(options);
}

import { EventEmitter } from "node:events";
import { basename } from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { loopTargetOf, MAX_PACKAGE_DEPTH } from "./discovery/is-symlink-loop.js";
import { codeRootOf, isSkillBundle, listBundleMembers } from "./discovery/skill-bundle.js";
import type { LoadReport, SkillLoaderEvents } from "./loader-types.js";
import { hashPackageFiles } from "./module/hash-package-files.js";
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

/** The handle `watchSkills` returns. */
export interface SkillWatcher {
  /** Subscribes to `loaded`, `reloaded`, `removed`, `error` and `ready`. */
  on<Event extends keyof SkillWatcherEvents>(
    event: Event,
    listener: (...args: SkillWatcherEvents[Event]) => void,
  ): SkillWatcher;
  off<Event extends keyof SkillWatcherEvents>(
    event: Event,
    listener: (...args: SkillWatcherEvents[Event]) => void,
  ): SkillWatcher;
  /** Resolves with the first load's report once the watcher is listening. */
  ready(): Promise<LoadReport>;
  /**
   * Resolves once the background import of every handler (started after `ready`) and every
   * pending reload have finished. After it, a broken edit of any package falls back to the
   * handler already in memory.
   */
  idle(): Promise<void>;
  /** Stops watching and stops serving handlers. */
  close(): Promise<void>;
  /** The loader behind the watcher. */
  readonly loader: SkillLoader;
}

/**
 * `loadSkills` plus hot reload: watches the configured folders with chokidar and, for any added,
 * changed or deleted file of a package — manifest, handler, or a module the handler imports —
 * reloads that package only, debounced per package and never two reloads of one package at once.
 * Bad input never stops the watcher: it becomes an `error` event and the last good version stays.
 */
export function watchSkills(options: WatchSkillsOptions = {}): SkillWatcher {
  const loader = new SkillLoader(options);
  const events = new EventEmitter<SkillWatcherEvents>();
  const debounceMs = options.debounceMs ?? 10;
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Map<string, Promise<void>>();
  const dirty = new Set<string>();
  let watcher: FSWatcher | undefined;
  let closed = false;
  let warming: Promise<void> = Promise.resolve();
  /** Whether the first scan is done. */
  let watching = false;
  /** Loop and alias links already met, so that chokidar asking again does not sync again. */
  const loopLinks = new Set<string>();
  /** Which path each real folder of a package is watched by: once, however many links reach it. */
  const folderClaims = new WatchedFolderClaims();
  let stopWaiting = (): void => {};
  const closing = new Promise<void>((resolve) => {
    stopWaiting = resolve;
  });

  for (const event of ["loaded", "reloaded", "removed", "error", "warning"] as const) {
    loader.on(event, (payload: unknown) => {
      if (event !== "error" || events.listenerCount("error") > 0) events.emit(event, payload as never);
    });
  }

  const sync = (root: string): void => {
    if (running.has(root)) {
      dirty.add(root);
      return;
    }
    const run = (async () => {
      const codeRoot = codeRootOf(root);
      const hashBefore = await hashPackageFiles(codeRoot);
      await loader.syncPackage(root);
      // chokidar drops a change that follows another change of the same file within its 50 ms
      // throttle: look once more after the window, and sync again if the files moved on.
      await new Promise((resolve) => setTimeout(resolve, CHOKIDAR_THROTTLE_MS + 10));
      if (!closed && (await hashPackageFiles(codeRoot)) !== hashBefore) dirty.add(root);
    })().finally(() => {
      running.delete(root);
      if (dirty.delete(root) && !closed) sync(root);
    });
    running.set(root, run);
  };

  /**
   * The packages a changed path can affect: its package, or for a path inside a bundle every
   * member (they share its code), including members known before that are gone now.
   */
  const rootsToSync = (path: string): string[] => {
    const top = loader.topPackageFolderOf(path);
    if (top === undefined || basename(top).startsWith(".")) return [];
    const roots = new Set([top, ...loader.packageRootsWithin(top)]);
    if (isSkillBundle(top)) for (const member of listBundleMembers(top)) roots.add(member);
    return [...roots].filter((root) => !basename(root).startsWith("."));
  };

  const schedule = (path: string): void => {
    if (closed) return;
    for (const root of rootsToSync(path)) {
      clearTimeout(timers.get(root));
      timers.set(
        root,
        setTimeout(() => {
          timers.delete(root);
          sync(root);
        }, debounceMs),
      );
    }
  };

  const started = (async () => {
    const report = await loader.loadAll();
    watcher = watch(loader.dirs, {
      ignoreInitial: true,
      // Symlinks are followed (a package may be a link to where it is developed), except folder
      // links that lead back up — two links to `.` would otherwise be walked without end — and
      // second paths to a folder already watched. The hash skips the same links and names the
      // loops (a `SYMLINK_LOOP` warning).
      ignored: (path, stats) => {
        if (/[\\/](node_modules|\.git)([\\/]|$)/.test(path)) return true;
        const top = loader.watchedFolderOf(path);
        if (top === undefined) return false;
        if (loopTargetOf(path, top) === undefined) {
          // Not a loop, but maybe a second path to a folder already watched (a ring of folders
          // linking each other made 3^length paths): watched once, its edits still reload.
          const packageFolder = loader.topPackageFolderOf(path);
          if (packageFolder === undefined || !folderClaims.ignores(path, packageFolder, stats)) return false;
        }
        // A loop link made while watching is an edit of its package like any other: the sync
        // names it. (Those found at start-up are in the first load's report.)
        if (watching && !loopLinks.has(path)) schedule(path);
        loopLinks.add(path);
        return true;
      },
      // Watched folder, `@scope`, package: then as deep as a package is hashed.
      depth: MAX_PACKAGE_DEPTH + 2,
    });
    watcher.on("all", (event, path) => {
      if (event === "unlinkDir" || event === "unlink") {
        const packageFolder = loader.topPackageFolderOf(path);
        if (packageFolder !== undefined) folderClaims.release(path, packageFolder);
      }
      schedule(path);
    });
    watcher.on("error", (error) => {
      if (events.listenerCount("error") > 0) {
        events.emit("error", { root: "", file: "", code: "WATCH_FAILED", message: String(error) });
      }
    });
    // close() before the watch is up must not wait for a `ready` that never comes.
    await Promise.race([new Promise<void>((resolve) => watcher!.once("ready", () => resolve())), closing]);
    watching = true;
    warming = loader.warmUp();
    events.emit("ready", report);
    return report;
  })();
  // Surfaced through ready(); never an unhandled rejection.
  started.catch(() => {});

  const handle: SkillWatcher = {
    loader,
    on(event, listener) {
      events.on(event, listener as never);
      return handle;
    },
    off(event, listener) {
      events.off(event, listener as never);
      return handle;
    },
    ready: () => started,
    async idle() {
      await started.catch(() => undefined);
      await warming;
      while (timers.size > 0 || running.size > 0) {
        await Promise.allSettled([...running.values()]);
        if (timers.size > 0) await new Promise((resolve) => setTimeout(resolve, debounceMs));
      }
    },
    async close() {
      closed = true;
      stopWaiting();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await started.catch(() => undefined);
      await watcher?.close();
      await warming;
      await Promise.allSettled([...running.values()]);
      loader.close();
    },
  };
  return handle;
}

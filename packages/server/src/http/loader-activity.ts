/** A package as the loader reports it (the shape of `@skillbox/loader`'s `LoadedPackage`). */
export interface ActivityPackage {
  kind: "skill" | "interceptor";
  name: string;
  version: string | undefined;
  root: string;
  /** The registry id (skills only). */
  skillId?: string;
}

/** A package that did not load (the shape of `@skillbox/loader`'s `FailedPackage`). */
export interface ActivityFailure {
  root: string;
  /** The file at fault (manifest or handler module). */
  file: string;
  code: string;
  message: string;
}

/** A load warning (the shape of `@skillbox/loader`'s `LoadWarning`). */
export interface ActivityWarning {
  code: string;
  folder: string;
  message: string;
}

/** What every loader activity carries: when it happened, and whose packages it is about. */
interface ActivityCommon {
  /** ISO time the loader reported it. */
  at: string;
  /**
   * The owner of the loader's packages: `system` and `public` are global (every caller hears
   * about them), any other owner is heard only by that owner.
   */
  owner: string;
}

/**
 * One thing the loader did, as `GET /api/events` sends it in an `activity` event: a package
 * `loaded`, `reloaded` (an edit went live) or `removed` (`kind` says skill or interceptor),
 * a `load-error` (the file at fault and why; the last good version keeps serving), or a
 * `warning` (a configured folder missing, a package too large to watch whole).
 */
export type LoaderActivity =
  | (ActivityCommon & { type: "loaded" | "reloaded" | "removed"; package: ActivityPackage })
  | (ActivityCommon & { type: "load-error"; failure: ActivityFailure })
  | (ActivityCommon & { type: "warning"; warning: ActivityWarning });

/** A source of loader activity: the `activity` option of `createHttpApp`. */
export interface ActivitySource {
  /** Calls `listener` with every activity from now on, until the returned function is called. */
  subscribe(listener: (activity: LoaderActivity) => void): () => void;
}

/** Options of {@link createLoaderActivity}. */
export interface LoaderActivityOptions {
  /** The owner of the loader's packages (the loader's `owner` option; default `system`: global). */
  owner?: string;
  /**
   * How paths are shown to callers (default: as the loader gives them). The CLI shows them
   * relative to the working directory, so absolute paths of the machine do not leave it.
   */
  displayPath?: (path: string) => string;
}

/**
 * The {@link ActivitySource} a host feeds from its loader or watcher: wire each loader event
 * to the method of the same name (`watcher.on("reloaded", (entry) => activity.reloaded(entry))`),
 * pass the result as `createHttpApp({ activity })`. Listeners are called synchronously; one
 * that throws is isolated from the others and from the loader.
 */
export interface LoaderActivityFeed extends ActivitySource {
  loaded(entry: ActivityPackage): void;
  reloaded(entry: ActivityPackage): void;
  removed(entry: ActivityPackage): void;
  /** The loader's `error` event: a package that did not load. */
  failed(failure: ActivityFailure): void;
  warned(warning: ActivityWarning): void;
}

/** Creates a {@link LoaderActivityFeed}: one set of loader listeners, however many streams listen. */
export function createLoaderActivity(options: LoaderActivityOptions = {}): LoaderActivityFeed {
  const owner = options.owner ?? "system";
  const show = options.displayPath ?? ((path: string) => path);
  const listeners = new Set<(activity: LoaderActivity) => void>();
  const publish = (activity: LoaderActivity) => {
    for (const listener of [...listeners]) {
      try {
        listener(activity);
      } catch (error) {
        console.error("skillbox http: a loader activity listener failed", error);
      }
    }
  };
  const at = () => new Date().toISOString();
  const packageOf = (entry: ActivityPackage): ActivityPackage => ({
    kind: entry.kind,
    name: entry.name,
    version: entry.version,
    root: show(entry.root),
    ...(entry.skillId === undefined ? {} : { skillId: entry.skillId }),
  });
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    loaded: (entry) => publish({ type: "loaded", at: at(), owner, package: packageOf(entry) }),
    reloaded: (entry) => publish({ type: "reloaded", at: at(), owner, package: packageOf(entry) }),
    removed: (entry) => publish({ type: "removed", at: at(), owner, package: packageOf(entry) }),
    failed: (failure) =>
      publish({
        type: "load-error",
        at: at(),
        owner,
        failure: {
          root: show(failure.root),
          file: show(failure.file),
          code: failure.code,
          // A parser's message names the file by its absolute path: shown as the root is.
          message: failure.message.split(failure.root).join(show(failure.root)),
        },
      }),
    warned: (warning) =>
      publish({
        type: "warning",
        at: at(),
        owner,
        warning: {
          code: warning.code,
          folder: show(warning.folder),
          message: warning.message.split(warning.folder).join(show(warning.folder)),
        },
      }),
  };
}

import { resolve } from "node:path";
import type { ActivitySource, LoaderActivity } from "./loader-activity.js";

/** A package's failed load, as the loader's activity reported it. */
export interface PackageLoadError {
  /** The package folder (absolute). */
  root: string;
  /** The file at fault (absolute: the manifest or a module). */
  file: string;
  code: string;
  message: string;
  /** Epoch milliseconds. */
  at: number;
}

/**
 * Where the server reads the last load error of a package: skill views show it for the skill
 * its folder provides, `GET /api/interceptors` for an interceptor plugin. Read-only.
 */
export interface PackageLoadErrors {
  /** The last failed load of the package in `root` (absolute) since it last loaded, if any. */
  lastLoadError(root: string): PackageLoadError | undefined;
  /** The folder (absolute) of the interceptor plugin named `name`, when the loader loaded one. */
  interceptorPackage(name: string): string | undefined;
}

/**
 * The last load error of each package, kept from the loader's activity (the `activity` option
 * of `createHttpApp`): a `load-error` records it, a later `loaded`, `reloaded` or `removed` of
 * the same folder clears it. The activity may show paths relative to the working directory (the
 * CLI does); they are resolved against it, as the loader's own paths are absolute.
 */
export class PackageLoadErrorLog implements PackageLoadErrors {
  private readonly errors = new Map<string, PackageLoadError>();
  /** Interceptor plugin name → its package folder. */
  private readonly interceptors = new Map<string, string>();

  /** A log following `activity` from now on (for as long as the source lives). */
  static following(activity: ActivitySource): PackageLoadErrorLog {
    const log = new PackageLoadErrorLog();
    activity.subscribe((entry) => log.record(entry));
    return log;
  }

  /** Takes one activity into account. */
  record(activity: LoaderActivity): void {
    if (activity.type === "warning") return;
    if (activity.type === "load-error") {
      const { root, file, code, message } = activity.failure;
      const at = Date.parse(activity.at);
      this.errors.set(resolve(root), {
        root: resolve(root),
        file: resolve(file),
        code,
        message,
        at: Number.isNaN(at) ? Date.now() : at,
      });
      return;
    }
    const root = resolve(activity.package.root);
    this.errors.delete(root);
    if (activity.package.kind !== "interceptor") return;
    if (activity.type === "removed") {
      if (this.interceptors.get(activity.package.name) === root)
        this.interceptors.delete(activity.package.name);
    } else {
      this.interceptors.set(activity.package.name, root);
    }
  }

  lastLoadError(root: string): PackageLoadError | undefined {
    return this.errors.get(resolve(root));
  }

  interceptorPackage(name: string): string | undefined {
    return this.interceptors.get(name);
  }
}

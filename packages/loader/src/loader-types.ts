/** A package that loaded. */
export interface LoadedPackage {
  kind: "skill" | "interceptor";
  name: string;
  version: string | undefined;
  root: string;
  /** The registry id (skills only). */
  skillId?: string;
}

/** A package that did not load, and why. */
export interface FailedPackage {
  root: string;
  /** The file at fault (manifest or handler module). */
  file: string;
  code: string;
  message: string;
}

/**
 * Something a load noticed that is not a package failure. Codes:
 * - `FOLDER_NOT_FOUND` – a configured folder does not exist, so it provides no packages (and
 *   skills loaded from it by earlier runs are not served).
 * - `SYMLINK_LOOP` – a symlinked folder inside a package leads back to the package or one of its
 *   parents (`link -> .`); it is not followed by the watcher, the hash or the snapshot (`folder`
 *   is the link).
 * - `PACKAGE_TOO_LARGE` – a package has more files (2,000) or deeper folders (32) than are
 *   hashed and snapshotted; the rest is left out (`folder` is where the walk stopped).
 */
export interface LoadWarning {
  code: "FOLDER_NOT_FOUND" | "SYMLINK_LOOP" | "PACKAGE_TOO_LARGE";
  /** The folder concerned (absolute). */
  folder: string;
  message: string;
}

/** The outcome of a full load. */
export interface LoadReport {
  loaded: LoadedPackage[];
  /**
   * Packages that did not load. An interceptor plugin here that never loaded is stood in for by
   * a fail-closed interceptor refusing what it would guard (`INTERCEPTOR_UNAVAILABLE`).
   */
  failed: FailedPackage[];
  /** Registry entries of packages that disappeared since the last run. */
  removed: LoadedPackage[];
  /** Configured folders that do not exist, and the like. */
  warnings: LoadWarning[];
}

/** Events of a loader (and of the watcher handle). */
export interface SkillLoaderEvents {
  loaded: [LoadedPackage];
  reloaded: [LoadedPackage];
  removed: [LoadedPackage];
  error: [FailedPackage];
  /**
   * Emitted for each configured folder that does not exist on every full load, and once per link
   * or package when a walk of a package leaves something out (see `LoadWarning`).
   */
  warning: [LoadWarning];
}

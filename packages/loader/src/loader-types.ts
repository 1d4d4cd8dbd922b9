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

/** The outcome of a full load. */
export interface LoadReport {
  loaded: LoadedPackage[];
  failed: FailedPackage[];
  /** Registry entries of packages that disappeared since the last run. */
  removed: LoadedPackage[];
}

/** Events of a loader (and of the watcher handle). */
export interface SkillLoaderEvents {
  loaded: [LoadedPackage];
  reloaded: [LoadedPackage];
  removed: [LoadedPackage];
  error: [FailedPackage];
}

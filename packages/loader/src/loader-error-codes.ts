import { defineErrorCodes, type ErrorCodeOf } from "@skillbox/core";

/**
 * The codes of the warnings and watcher errors the loader reports on top of core's (a package
 * that fails to load reports core's `MANIFEST_INVALID`, `HANDLER_INVALID`, `REQUIREMENTS_UNMET`),
 * each with its one line of documentation. None of them ends an execution.
 */
export const LOADER_ERROR_CODES = defineErrorCodes({
  FOLDER_NOT_FOUND: {
    description:
      "A configured folder does not exist, so it provides no packages (skills loaded from it by earlier runs are not served).",
  },
  SYMLINK_LOOP: {
    description:
      "A symlinked folder inside a package leads back to the package or a parent (`link -> .`); the watcher, the hash and the snapshot do not follow it.",
  },
  PACKAGE_TOO_LARGE: {
    description:
      "A package has more files (2,000) or deeper folders (32) than are hashed and snapshotted; the rest is left out.",
  },
  WATCH_FAILED: {
    description: "The file watcher reported an error; hot reload may miss changes until it recovers.",
  },
});

/** The error codes of `@skillbox/loader` (see {@link LOADER_ERROR_CODES}). */
export type LoaderErrorCode = ErrorCodeOf<typeof LOADER_ERROR_CODES>;

import { isSkillboxError, SkillboxError } from "@skillbox/core/handler";

/**
 * Turns a file system failure on the workspace path `path` (as the caller wrote it) into the
 * skill's error codes, with messages that name the path, never the host folder. Errors it does not
 * know (and `AbortError`, which the executor turns into `TIMEOUT` or `CANCELLED`) pass unchanged.
 */
export function fileSystemError(error: unknown, path: string): unknown {
  if (isSkillboxError(error)) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const quoted = JSON.stringify(path);
  const options = { cause: error, data: { path } };
  switch (code) {
    case "ENOENT":
      return new SkillboxError(
        "FILE_NOT_FOUND",
        `workspace path ${quoted} does not exist; list its folder to see what is there`,
        options,
      );
    case "ENOTDIR":
      return new SkillboxError(
        "FILE_NOT_FOUND",
        `workspace path ${quoted} does not exist: a folder on the way is a file`,
        options,
      );
    case "EISDIR":
      return new SkillboxError(
        "PATH_REFUSED",
        `workspace path ${quoted} is a folder; use operation "list" for folders and name a file here`,
        options,
      );
    case "ENOTEMPTY":
    case "EEXIST":
      return new SkillboxError(
        "PATH_REFUSED",
        `workspace folder ${quoted} is not empty; delete the files in it first`,
        options,
      );
    case "ELOOP":
      return new SkillboxError(
        "PATH_REFUSED",
        `workspace path ${quoted} became a symlink while it was being used; symlinks are never followed for this`,
        options,
      );
    case "ENAMETOOLONG":
      return new SkillboxError(
        "PATH_REFUSED",
        `workspace path ${quoted} is too long for the file system; use shorter names or fewer folders`,
        options,
      );
    default:
      return error;
  }
}

/** The result of a file system call, or `undefined` when it fails because nothing is at the path. */
export async function optional<Value>(work: Promise<Value>): Promise<Value | undefined> {
  try {
    return await work;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

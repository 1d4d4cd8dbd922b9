import type { Stats } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import { isAbsolute, join, posix, relative, sep, win32 } from "node:path";
import { SkillboxError } from "../errors/skillbox-error.js";
import { matchSensitivePathName } from "./sensitive-path-names.js";

/** Options of {@link resolveWorkspacePath}. */
export interface ResolveWorkspacePathOptions {
  /**
   * The path is about to be written (or replaced, or deleted): a symlink as its last segment is
   * refused instead of followed, and the workspace root itself is refused.
   */
  forWrite?: boolean;
}

const ALLOWED =
  "use a relative path inside the workspace with forward slashes, no `..`, no symlinks leading out, and no sensitive names such as .env or id_rsa";

/** NAME_MAX of common file systems (ext4, APFS, NTFS in UTF-16 units): longer names cannot exist. */
const MAX_NAME_BYTES = 255;

function refuse(path: string, reason: string): SkillboxError {
  return new SkillboxError("PATH_REFUSED", `path ${JSON.stringify(path)} is refused: ${reason}; ${ALLOWED}`, {
    data: { path, reason },
  });
}

/** Checks that need no file system: the shape of the path and each of its names. Returns its segments. */
function lexicalSegments(path: string): string[] {
  if (typeof path !== "string") throw refuse(String(path), "it is not a string");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
  if (/[\u0000-\u001f\u007f]/.test(path)) {
    throw refuse(path, "it contains a NUL byte or another control character");
  }
  if (path.includes("\\")) throw refuse(path, "it contains a backslash (a separator on Windows)");
  if (posix.isAbsolute(path) || win32.isAbsolute(path) || /^[A-Za-z]:/.test(path)) {
    throw refuse(path, "it is absolute (a leading slash, a drive letter or a UNC share)");
  }
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) throw refuse(path, "it climbs out with a `..` segment");
  if (segments.some((segment) => Buffer.byteLength(segment, "utf8") > MAX_NAME_BYTES)) {
    throw refuse(path, `a name in it is longer than ${MAX_NAME_BYTES} bytes`);
  }
  refuseSensitive(path, segments);
  return segments;
}

function refuseSensitive(path: string, segments: readonly string[]): void {
  for (const segment of segments) {
    const pattern = matchSensitivePathName(segment);
    if (pattern !== undefined) {
      throw refuse(
        path,
        `${JSON.stringify(segment)} is a sensitive name (matches ${JSON.stringify(pattern)})`,
      );
    }
  }
}

function isInside(parent: string, child: string): boolean {
  const between = relative(parent, child);
  return between === "" || (!between.startsWith(`..${sep}`) && between !== ".." && !isAbsolute(between));
}

async function lstatOrUndefined(path: string, next: string): Promise<Stats | undefined> {
  try {
    return await lstat(next);
  } catch (error) {
    // ENOTDIR: a segment on the way is a file; the caller's file operation reports that.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    // Node's message would name the host path, which callers must never see.
    if (code === "ENAMETOOLONG") throw refuse(path, "it is too long for the file system");
    throw error;
  }
}

/** The real path of a symlink, refused when it dangles, loops, or leads out of the workspace. */
async function followSymlink(path: string, link: string, realWorkspace: string): Promise<string> {
  let target: string;
  try {
    target = await realpath(link);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw refuse(path, "it goes through a symlink loop");
    if (code === "ENOENT") {
      throw refuse(path, "it goes through a symlink whose target does not exist (so it cannot be checked)");
    }
    throw error;
  }
  if (!isInside(realWorkspace, target))
    throw refuse(path, "it goes through a symlink leading out of the workspace");
  return target;
}

async function realWorkspacePath(workspace: string): Promise<string> {
  try {
    return await realpath(workspace);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new SkillboxError(
      "FILE_NOT_FOUND",
      `workspace ${JSON.stringify(workspace)} does not exist; create it with ownerWorkspace(owner) first`,
      { data: { workspace } },
    );
  }
}

/**
 * Turns a caller-given relative `path` into the absolute real path it names inside `workspace`, or
 * throws `SkillboxError("PATH_REFUSED")` with a message naming the path, the reason and what is
 * allowed. Empty or `"."` is the workspace root (allowed except with `forWrite`). Refused:
 *
 * - absolute paths in POSIX or Windows form (`/etc`, `C:\x`, `C:x`, `\\server\share`), backslashes
 *   (separators on Windows, so `a\..\..` could climb there), NUL bytes and other control characters;
 * - any `..` segment, even one that would stay inside (`a/../b`), and names longer than 255 bytes
 *   (or paths too long for the file system);
 * - any segment matching {@link SENSITIVE_PATH_NAMES} (`.env`, `.git`, `id_rsa`, `*.pem` …), in the
 *   given path and in the real path a symlink resolves to;
 * - symlink escapes: every symlink on the way is resolved and must stay inside the real path of the
 *   workspace; a dangling symlink or a loop is refused because it cannot be checked; with
 *   `forWrite`, a symlink as the last segment is refused instead of written through.
 *
 * The existing part of the path is resolved to its real path and the missing rest is appended, so
 * `notes/new.txt` resolves while `notes/` may not exist yet. The check happens at call time: a
 * symlink swapped in by another process between this call and the file operation is not caught,
 * nor a hard link to an outside file (only the host can create either inside a workspace).
 *
 * @example
 * const file = await resolveWorkspacePath(workspace, "reports/q3.md", { forWrite: true });
 */
export async function resolveWorkspacePath(
  workspace: string,
  path: string,
  options: ResolveWorkspacePathOptions = {},
): Promise<string> {
  const segments = lexicalSegments(path);
  if (options.forWrite && segments.length === 0) {
    throw refuse(path, "it names the workspace root itself, which cannot be written or deleted");
  }
  const realWorkspace = await realWorkspacePath(workspace);
  let current = realWorkspace;
  for (const [index, segment] of segments.entries()) {
    const next = join(current, segment);
    const stats = await lstatOrUndefined(path, next);
    if (stats === undefined) return join(next, ...segments.slice(index + 1));
    const isLast = index === segments.length - 1;
    if (stats.isSymbolicLink()) {
      if (isLast && options.forWrite)
        throw refuse(path, "its last segment is a symlink, which is never written through");
      current = await followSymlink(path, next, realWorkspace);
      refuseSensitive(path, relative(realWorkspace, current).split(sep));
    } else {
      current = next;
    }
  }
  return current;
}

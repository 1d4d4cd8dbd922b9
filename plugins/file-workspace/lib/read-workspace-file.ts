import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { resolveWorkspacePath, SkillboxError } from "@skillbox/core/handler";
import { fileSystemError } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult } from "./file-workspace-schemas.js";
import type { OperationContext } from "./operation-context.js";
import { displayPath } from "./workspace-paths.js";

/**
 * O_NOFOLLOW: the path is already resolved, so a symlink here was swapped in since; O_NONBLOCK: a
 * FIFO would otherwise block `open` forever, beyond the reach of the signal.
 */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

function sizeLimitExceeded(path: string, size: number, cap: number, source: string): SkillboxError {
  return new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `workspace file ${JSON.stringify(path)} is ${size} bytes, over the read cap of ${cap} bytes (${source}); raise the cap or keep the file smaller`,
    { data: { path, bytes: size, limit: cap } },
  );
}

function decodeText(data: Buffer, path: string): string {
  try {
    // ignoreBOM keeps a byte order mark, so what is read is exactly what was written.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(data);
  } catch (error) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `workspace file ${JSON.stringify(path)} is not valid UTF-8 text; read it with encoding "base64"`,
      { cause: error, data: { path } },
    );
  }
}

function refuseNonFile(stats: Stats, path: string): void {
  if (stats.isFile()) return;
  const what = stats.isDirectory() ? 'a folder; use operation "list" for folders' : "not a regular file";
  throw new SkillboxError("PATH_REFUSED", `workspace path ${JSON.stringify(path)} is ${what}`, {
    data: { path },
  });
}

/**
 * Refuses a file with more than one name: a hard link inside the workspace may share its content
 * with a file outside it (a key, say), and unlike a symlink nothing in the path shows where it leads.
 */
export function refuseHardLink(stats: Stats, path: string): void {
  if (stats.nlink <= 1) return;
  throw new SkillboxError(
    "PATH_REFUSED",
    `workspace file ${JSON.stringify(path)} has ${stats.nlink} hard links, so it may be a file outside the workspace; hard-linked files are never read`,
    { data: { path, links: stats.nlink } },
  );
}

/** `read`: returns a file's content as UTF-8 text or base64, refusing files over the cap. */
export async function readWorkspaceFile(
  request: FileWorkspaceRequest<"read">,
  context: OperationContext,
): Promise<FileWorkspaceResult<"read">> {
  const path = displayPath(request.path);
  const target = await resolveWorkspacePath(context.workspace, request.path);
  const configuredCap = context.settings.maxFileBytes;
  const cap = Math.min(request.maxBytes ?? configuredCap, configuredCap);
  const source =
    request.maxBytes !== undefined && request.maxBytes < configuredCap
      ? "the request's maxBytes"
      : "SKILLBOX_WORKSPACE_MAX_FILE_BYTES";
  const handle = await open(target, READ_FLAGS).catch((error: unknown) => {
    throw fileSystemError(error, path);
  });
  try {
    const stats = await handle.stat();
    refuseNonFile(stats, path);
    refuseHardLink(stats, path);
    if (stats.size > cap) throw sizeLimitExceeded(path, stats.size, cap, source);
    const data = await handle.readFile({ signal: context.signal });
    // The file may have grown between stat and read.
    if (data.length > cap) throw sizeLimitExceeded(path, data.length, cap, source);
    return {
      operation: "read",
      path,
      encoding: request.encoding,
      content: request.encoding === "base64" ? data.toString("base64") : decodeText(data, path),
      bytes: data.length,
      modifiedAt: stats.mtime.toISOString(),
    };
  } finally {
    await handle.close();
  }
}

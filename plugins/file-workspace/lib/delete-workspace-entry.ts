import { lstat, rmdir, unlink } from "node:fs/promises";
import { resolveWorkspacePath, SkillboxError } from "@skillbox/core/handler";
import { fileSystemError } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult } from "./file-workspace-schemas.js";
import type { OperationContext } from "./operation-context.js";
import { displayPath } from "./workspace-paths.js";

/**
 * `delete`: removes one file or one empty folder. Non-empty folders are refused rather than removed
 * recursively, so one mistaken call cannot wipe a tree; symlinks are refused (the caller cannot
 * create them, so they belong to whoever set up the workspace), and so is the workspace root.
 */
export async function deleteWorkspaceEntry(
  request: FileWorkspaceRequest<"delete">,
  context: OperationContext,
): Promise<FileWorkspaceResult<"delete">> {
  const path = displayPath(request.path);
  const target = await resolveWorkspacePath(context.workspace, request.path, { forWrite: true });
  try {
    const stats = await lstat(target);
    context.signal.throwIfAborted();
    if (stats.isDirectory()) {
      await rmdir(target);
      return { operation: "delete", path, type: "directory" };
    }
    if (!stats.isFile()) {
      throw new SkillboxError(
        "PATH_REFUSED",
        `workspace path ${JSON.stringify(path)} is not a regular file`,
        {
          data: { path },
        },
      );
    }
    await unlink(target);
    return { operation: "delete", path, type: "file" };
  } catch (error) {
    throw fileSystemError(error, path);
  }
}

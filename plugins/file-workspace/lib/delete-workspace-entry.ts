import { lstat, rmdir, unlink } from "node:fs/promises";
import { resolveWorkspacePath, SkillboxError } from "@skillbox/core/handler";
import { fileSystemError } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult } from "./file-workspace-schemas.js";
import type { OperationContext } from "./operation-context.js";
import { displayPath } from "./workspace-paths.js";
import { workspaceUsageCache } from "./workspace-usage.js";

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
  // Through the usage cache, so the workspace's usage drops by what was removed. `rmdir` and
  // `unlink` either happen or fail with nothing removed, so a failed delete keeps the usage.
  return workspaceUsageCache.change<FileWorkspaceResult<"delete">>(
    context.workspace,
    context.signal,
    async () => {
      try {
        const stats = await lstat(target);
        context.signal.throwIfAborted();
        if (stats.isDirectory()) {
          await rmdir(target);
          return {
            result: { operation: "delete" as const, path, type: "directory" as const },
            delta: { bytes: 0, entries: -1 },
          };
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
        return {
          result: { operation: "delete" as const, path, type: "file" as const },
          delta: { bytes: -stats.size, entries: -1 },
        };
      } catch (error) {
        throw fileSystemError(error, path);
      }
    },
  );
}

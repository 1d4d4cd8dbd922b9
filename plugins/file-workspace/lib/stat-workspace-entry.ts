import { stat } from "node:fs/promises";
import { resolveWorkspacePath } from "@skillbox/core/handler";
import { fileSystemError } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult } from "./file-workspace-schemas.js";
import type { OperationContext } from "./operation-context.js";
import { describeEntry, displayPath } from "./workspace-paths.js";

/** `stat`: type, size and modification time of a file or folder (a symlink inside the workspace is followed). */
export async function statWorkspaceEntry(
  request: FileWorkspaceRequest<"stat">,
  context: OperationContext,
): Promise<FileWorkspaceResult<"stat">> {
  const path = displayPath(request.path);
  const target = await resolveWorkspacePath(context.workspace, request.path);
  const stats = await stat(target).catch((error: unknown) => {
    throw fileSystemError(error, path);
  });
  const { type, bytes, modifiedAt } = describeEntry(path, path, stats);
  return { operation: "stat", path, type, bytes, modifiedAt };
}

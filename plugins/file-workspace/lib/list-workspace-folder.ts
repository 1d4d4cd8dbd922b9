import type { Dirent } from "node:fs";
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { matchSensitivePathName, resolveWorkspacePath } from "@skillbox/core/handler";
import { fileSystemError } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult, WorkspaceEntry } from "./file-workspace-schemas.js";
import type { OperationContext } from "./operation-context.js";
import { childPath, describeEntry, displayPath } from "./workspace-paths.js";

interface PendingFolder {
  /** Real path on disk. */
  target: string;
  /** Path shown to the caller. */
  path: string;
}

/** A folder's entries sorted by name, without the sensitive ones (they cannot be read or written anyway). */
async function visibleEntries(target: string, path: string): Promise<Dirent[]> {
  const entries = await readdir(target, { withFileTypes: true }).catch((error: unknown) => {
    throw fileSystemError(error, path);
  });
  return entries
    .filter((entry) => matchSensitivePathName(entry.name) === undefined)
    .sort((first, second) => (first.name < second.name ? -1 : first.name > second.name ? 1 : 0));
}

/**
 * `list`: the entries of a folder (sorted by name; with `recursive` its sub-folders' too, each
 * folder's entries together), up to the smaller of the request's `limit` and the configured list limit; `truncated` says
 * more exist. Symlinks are listed, not followed; sensitive names are left out. Listing a file
 * returns that file alone.
 */
export async function listWorkspaceFolder(
  request: FileWorkspaceRequest<"list">,
  context: OperationContext,
): Promise<FileWorkspaceResult<"list">> {
  const path = displayPath(request.path);
  const target = await resolveWorkspacePath(context.workspace, request.path);
  const stats = await stat(target).catch((error: unknown) => {
    throw fileSystemError(error, path);
  });
  if (!stats.isDirectory()) {
    const name = path.split("/").at(-1) ?? path;
    return { operation: "list", path, entries: [describeEntry(name, path, stats)], truncated: false };
  }
  const limit = Math.min(request.limit ?? context.settings.listLimit, context.settings.listLimit);
  const entries: WorkspaceEntry[] = [];
  // Folders still to list, one array per depth. Each folder's entries come out together, folders in
  // depth-first order, so a truncated result still shows the requested folder's own entries first.
  const pending: PendingFolder[][] = [[{ target, path }]];
  for (let level = pending.at(-1); level !== undefined; level = pending.at(-1)) {
    const folder = level.shift();
    if (folder === undefined) {
      pending.pop();
      continue;
    }
    context.signal.throwIfAborted();
    const children: PendingFolder[] = [];
    for (const entry of await visibleEntries(folder.target, folder.path)) {
      if (entries.length === limit) return { operation: "list", path, entries, truncated: true };
      const entryTarget = join(folder.target, entry.name);
      const entryPath = childPath(folder.path, entry.name);
      const entryStats = await lstat(entryTarget).catch(() => undefined);
      if (entryStats === undefined) continue; // deleted while listing
      entries.push(describeEntry(entry.name, entryPath, entryStats));
      if (request.recursive && entryStats.isDirectory())
        children.push({ target: entryTarget, path: entryPath });
    }
    if (children.length > 0) pending.push(children);
  }
  return { operation: "list", path, entries, truncated: false };
}

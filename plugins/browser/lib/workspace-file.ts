import { mkdir, realpath, writeFile } from "node:fs/promises";
import { dirname, relative, sep } from "node:path";
import { ownerWorkspace, resolveWorkspacePath } from "@skillbox/core/handler";

/** A file destination inside an owner's workspace. */
export interface WorkspaceFile {
  /** Absolute path on the host (never returned to the caller). */
  absolutePath: string;
  /** The path relative to the workspace, with forward slashes: what the caller sees. */
  workspacePath: string;
}

/**
 * Resolves a caller's workspace-relative `path` for writing, inside the workspace of `owner`
 * (created on first use under `root`, else `SKILLBOX_WORKSPACE_DIR`). Throws `PATH_REFUSED` for
 * absolute paths, `..`, symlink escapes and sensitive names.
 */
export async function resolveWorkspaceFile(
  owner: string,
  path: string,
  root: string | undefined,
): Promise<WorkspaceFile> {
  const workspace = await ownerWorkspace(owner, root === undefined ? {} : { root });
  const absolutePath = await resolveWorkspacePath(workspace, path, { forWrite: true });
  const workspacePath = relative(await realpath(workspace), absolutePath)
    .split(sep)
    .join("/");
  return { absolutePath, workspacePath };
}

/**
 * Writes `data` to `path` in `owner`'s workspace, creating missing folders, and returns the
 * workspace-relative path. The path is checked again right before writing (a symlink may have
 * appeared while the page loaded).
 */
export async function writeWorkspaceFile(
  owner: string,
  path: string,
  data: Uint8Array,
  root: string | undefined,
): Promise<string> {
  const target = await resolveWorkspaceFile(owner, path, root);
  await mkdir(dirname(target.absolutePath), { recursive: true, mode: 0o700 });
  await writeFile(target.absolutePath, data);
  return target.workspacePath;
}

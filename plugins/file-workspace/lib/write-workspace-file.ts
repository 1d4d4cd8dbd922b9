import { lstat, mkdir, readFile, stat } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { resolveWorkspacePath, SkillboxError } from "@skillbox/core/handler";
import { atomicWriteFile } from "./atomic-write-file.js";
import { fileSystemError, optional } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult } from "./file-workspace-schemas.js";
import { WORKSPACE_ENTRY_BYTES } from "./file-workspace-settings.js";
import type { OperationContext } from "./operation-context.js";
import { refuseHardLink } from "./read-workspace-file.js";
import { displayPath } from "./workspace-paths.js";
import { type WorkspaceUsage, workspaceUsageCache } from "./workspace-usage.js";

/** Standard or URL-safe base64, padding optional, whitespace allowed (it is stripped). */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function decodeContent(request: FileWorkspaceRequest<"write">, path: string): Buffer {
  if (request.encoding === "utf8") return Buffer.from(request.content, "utf8");
  const compact = request.content.replace(/\s+/g, "");
  if (!BASE64.test(compact) || compact.replace(/=+$/, "").length % 4 === 1) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `content for ${JSON.stringify(path)} is not valid base64; encode the bytes as base64 or use encoding "utf8" for text`,
      { data: { path } },
    );
  }
  return Buffer.from(compact, "base64");
}

function fileTooLarge(path: string, size: number, limit: number, appended: boolean): SkillboxError {
  const what = appended ? "after appending would be" : "would be";
  return new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `workspace file ${JSON.stringify(path)} ${what} ${size} bytes, over the file cap of ${limit} bytes (SKILLBOX_WORKSPACE_MAX_FILE_BYTES); write less or split it into several files`,
    { data: { path, bytes: size, limit } },
  );
}

function workspaceFull(path: string, total: number, limit: number): SkillboxError {
  return new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `writing ${JSON.stringify(path)} would bring the workspace to ${total} bytes (file contents plus ${WORKSPACE_ENTRY_BYTES} bytes per file and folder), over its cap of ${limit} bytes (SKILLBOX_WORKSPACE_MAX_BYTES); delete files and folders you no longer need`,
    { data: { path, bytes: total, limit } },
  );
}

function tooManyEntries(path: string, entries: number, limit: number): SkillboxError {
  return new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `writing ${JSON.stringify(path)} would bring the workspace to ${entries} files and folders, over its cap of ${limit} (SKILLBOX_WORKSPACE_MAX_ENTRIES); delete files and folders you no longer need`,
    { data: { path, entries, limit } },
  );
}

function tooDeep(path: string, depth: number, limit: number): SkillboxError {
  return new SkillboxError(
    "PATH_REFUSED",
    `workspace path ${JSON.stringify(path)} is ${depth} levels deep, over the depth cap of ${limit} (SKILLBOX_WORKSPACE_MAX_DEPTH); use a flatter layout`,
    { data: { path, depth, limit } },
  );
}

/** How many folders between the workspace and `folder` (itself included) do not exist yet. */
async function missingFolders(workspace: string, folder: string): Promise<number> {
  let missing = 0;
  for (let current = folder; relative(workspace, current) !== ""; current = dirname(current)) {
    if ((await optional(lstat(current))) !== undefined) break;
    missing += 1;
  }
  return missing;
}

async function ensureParent(target: string, path: string, createParents: boolean): Promise<void> {
  const parent = dirname(target);
  if (createParents) {
    await mkdir(parent, { recursive: true }).catch((error: unknown) => {
      throw fileSystemError(error, path);
    });
    return;
  }
  const stats = await optional(stat(parent));
  if (stats?.isDirectory()) return;
  throw new SkillboxError(
    "FILE_NOT_FOUND",
    `the folder of workspace path ${JSON.stringify(path)} does not exist; create it or pass createParents: true`,
    { data: { path } },
  );
}

/**
 * `write`: replaces (or with `append`, extends) a file atomically, creating missing folders unless
 * `createParents` is false. Refuses paths deeper than the depth cap, content over the file cap,
 * and writes that would take the owner's workspace over its total cap (file bytes plus a block
 * per file and folder) or its entry cap. Usage comes from the process's usage cache, so a write
 * does not walk the tree.
 */
export async function writeWorkspaceFile(
  request: FileWorkspaceRequest<"write">,
  context: OperationContext,
): Promise<FileWorkspaceResult<"write">> {
  const path = displayPath(request.path);
  const { maxFileBytes, maxWorkspaceBytes, maxEntries, maxDepth } = context.settings;
  const target = await resolveWorkspacePath(context.workspace, request.path, { forWrite: true });
  const depth = path === "." ? 0 : path.split("/").length;
  if (depth > maxDepth) throw tooDeep(path, depth, maxDepth);
  const written = decodeContent(request, path);
  return workspaceUsageCache.change(
    context.workspace,
    context.signal,
    async (usage: Readonly<WorkspaceUsage>, modifying) => {
      const existing = await optional(lstat(target)).catch((error: unknown) => {
        throw fileSystemError(error, path);
      });
      if (existing !== undefined && !existing.isFile()) {
        const what = existing.isDirectory() ? "a folder; name a file inside it" : "not a regular file";
        throw new SkillboxError("PATH_REFUSED", `workspace path ${JSON.stringify(path)} is ${what}`, {
          data: { path },
        });
      }
      const appending = request.append && existing !== undefined;
      // Appending reads the file; replacing renames over it, leaving whatever else a hard link names untouched.
      if (appending) refuseHardLink(existing, path);
      const finalSize = written.length + (appending ? existing.size : 0);
      if (finalSize > maxFileBytes) throw fileTooLarge(path, finalSize, maxFileBytes, appending);
      const folders = request.createParents ? await missingFolders(context.workspace, dirname(target)) : 0;
      const added = folders + (existing === undefined ? 1 : 0);
      const entries = usage.entries + added;
      if (added > 0 && entries > maxEntries) throw tooManyEntries(path, entries, maxEntries);
      const total = usage.bytes - (existing?.size ?? 0) + finalSize + entries * WORKSPACE_ENTRY_BYTES;
      if (total > maxWorkspaceBytes) throw workspaceFull(path, total, maxWorkspaceBytes);
      // From here a failure may leave folders made and the file not written: the usage is rescanned.
      modifying();
      await ensureParent(target, path, request.createParents);
      // Appending rewrites the whole file so that it, too, is atomic; the file cap keeps that cheap.
      const data = appending
        ? Buffer.concat([await readFile(target, { signal: context.signal }), written])
        : written;
      if (data.length > maxFileBytes) throw fileTooLarge(path, data.length, maxFileBytes, true);
      await atomicWriteFile(target, data, context.signal).catch((error: unknown) => {
        throw fileSystemError(error, path);
      });
      return {
        result: {
          operation: "write" as const,
          path,
          bytes: written.length,
          size: data.length,
          created: existing === undefined,
        },
        delta: { bytes: data.length - (existing?.size ?? 0), entries: added },
      };
    },
  );
}

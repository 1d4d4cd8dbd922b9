import { lstat, mkdir, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { resolveWorkspacePath, SkillboxError } from "@skillbox/core/handler";
import { atomicWriteFile } from "./atomic-write-file.js";
import { fileSystemError, optional } from "./file-system-error.js";
import type { FileWorkspaceRequest, FileWorkspaceResult } from "./file-workspace-schemas.js";
import type { OperationContext } from "./operation-context.js";
import { refuseHardLink } from "./read-workspace-file.js";
import { displayPath } from "./workspace-paths.js";
import { workspaceUsage } from "./workspace-usage.js";

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
    `writing ${JSON.stringify(path)} would bring the workspace to ${total} bytes, over its cap of ${limit} bytes (SKILLBOX_WORKSPACE_MAX_BYTES); delete files you no longer need`,
    { data: { path, bytes: total, limit } },
  );
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
 * `createParents` is false. Refuses content over the file cap and writes that would take the
 * owner's workspace over its total cap.
 */
export async function writeWorkspaceFile(
  request: FileWorkspaceRequest<"write">,
  context: OperationContext,
): Promise<FileWorkspaceResult<"write">> {
  const path = displayPath(request.path);
  const { maxFileBytes, maxWorkspaceBytes } = context.settings;
  const target = await resolveWorkspacePath(context.workspace, request.path, { forWrite: true });
  const written = decodeContent(request, path);
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
  const total = (await workspaceUsage(context.workspace, context.signal)) - (existing?.size ?? 0) + finalSize;
  if (total > maxWorkspaceBytes) throw workspaceFull(path, total, maxWorkspaceBytes);
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
    operation: "write",
    path,
    bytes: written.length,
    size: data.length,
    created: existing === undefined,
  };
}

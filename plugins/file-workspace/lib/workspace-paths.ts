import type { Stats } from "node:fs";
import type { WorkspaceEntry } from "./file-workspace-schemas.js";

/**
 * The caller's path as shown in outputs and messages: forward slashes, no empty or `.` segments,
 * `.` for the root. Host paths never appear, so a caller learns nothing about where workspaces live.
 */
export function displayPath(path: string): string {
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  return segments.length === 0 ? "." : segments.join("/");
}

/** Joins a display path and a child name. */
export function childPath(parent: string, name: string): string {
  return parent === "." ? name : `${parent}/${name}`;
}

/** The entry type of `lstat`/`stat` results. */
function entryType(stats: Stats): WorkspaceEntry["type"] {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return "other";
}

/** A list entry from a name, its display path and its `lstat`. */
export function describeEntry(name: string, path: string, stats: Stats): WorkspaceEntry {
  return {
    name,
    path,
    type: entryType(stats),
    bytes: stats.isFile() ? stats.size : 0,
    modifiedAt: stats.mtime.toISOString(),
  };
}

import { createHash } from "node:crypto";
import { type Dirent, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { gzipSync, constants as zlibConstants } from "node:zlib";
import { SkillboxError } from "@skillbox/core";

/** A Studio build holds a handful of files; more than this is not one (a wrong `directory`). */
export const MAX_STUDIO_FILES = 500;
/** The same for bytes: every file is kept in memory, so a huge tree must be refused, not read. */
export const MAX_STUDIO_BYTES = 20 * 1024 * 1024;

/** One representation of a file: its bytes and their strong ETag. */
export interface StudioRepresentation {
  body: Uint8Array;
  etag: string;
}

/** A file of the Studio build, read and (when it pays) gzipped once. */
export interface StudioFile {
  contentType: string;
  cacheControl: string;
  identity: StudioRepresentation;
  /** Absent when gzip would not make it smaller (images, tiny files). */
  gzip?: StudioRepresentation;
}

/** What {@link readStudioFiles} found: URL path (`/assets/index-1a2b.js`) → file. */
export type StudioFileTable = ReadonlyMap<string, StudioFile>;

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
};
/** Already-compressed formats: gzipping them again spends memory for nothing. */
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg\+xml)/;
/** Vite names everything under assets/ by a hash of its content, so it never changes under one URL. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** index.html names the hashed assets of the current build: revalidate it every time (cheap with its ETag). */
const REVALIDATE = "no-cache";
/**
 * The files `createHttpApp` routes to the Studio (`/`, `/index.html`, `/assets/*`): any other file
 * of the folder could never be answered, so it is not held in memory either.
 */
function isServed(relative: string): boolean {
  return relative === "index.html" || relative.startsWith("assets/");
}

/**
 * Reads the Studio build in `directory` once: `index.html` and every regular file under
 * `assets/` (symbolic links and dot-files are skipped) become entries keyed by their URL path,
 * with content type, cache policy, ETag and, for text, a gzipped copy. Nothing outside this table is ever served, so no
 * request path can reach another file. Undefined when there is no build (no `index.html`);
 * a tree larger than {@link MAX_STUDIO_FILES} entries or {@link MAX_STUDIO_BYTES} bytes is
 * refused with `SERVER_CONFIG_INVALID` before it is read.
 */
export function readStudioFiles(directory: string): StudioFileTable | undefined {
  const paths = listFiles(directory);
  if (paths === undefined || !paths.some((path) => path.relative === "index.html")) return undefined;
  const table = new Map<string, StudioFile>();
  for (const { relative, absolute } of paths) {
    if (!isServed(relative)) continue;
    const urlPath = `/${relative}`;
    const body = new Uint8Array(readFileSync(absolute));
    const contentType = CONTENT_TYPES[extname(relative).toLowerCase()] ?? "application/octet-stream";
    table.set(urlPath, {
      contentType,
      cacheControl: relative.startsWith("assets/") ? IMMUTABLE : REVALIDATE,
      identity: { body, etag: etagOf(body, "") },
      ...gzipped(body, contentType),
    });
  }
  return table;
}

function gzipped(body: Uint8Array, contentType: string): { gzip?: StudioRepresentation } {
  if (!COMPRESSIBLE.test(contentType)) return {};
  const compressed = new Uint8Array(gzipSync(body, { level: zlibConstants.Z_BEST_COMPRESSION }));
  // A gzip header alone is 18 bytes: tiny files grow.
  if (compressed.byteLength >= body.byteLength) return {};
  return { gzip: { body: compressed, etag: etagOf(body, "-gzip") } };
}

/** Strong ETags, one per representation (RFC 9110 §8.8.3): the gzipped bytes differ from the file's. */
function etagOf(body: Uint8Array, suffix: string): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}${suffix}"`;
}

interface ListedFile {
  relative: string;
  absolute: string;
}

/** The regular files under `directory`, counted and sized before anything is read; undefined if it is no folder. */
function listFiles(directory: string): ListedFile[] | undefined {
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const files: ListedFile[] = [];
  let seen = 0;
  let bytes = 0;
  const pending: { relative: string; entries: Dirent[] }[] = [{ relative: "", entries }];
  for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
    for (const entry of folder.entries) {
      if (entry.name.startsWith(".")) continue;
      seen += 1;
      if (seen > MAX_STUDIO_FILES) throw tooLarge(directory, `more than ${MAX_STUDIO_FILES} files`);
      const relative = `${folder.relative}${entry.name}`;
      const absolute = join(directory, relative);
      if (entry.isDirectory()) {
        pending.push({ relative: `${relative}/`, entries: readdirSync(absolute, { withFileTypes: true }) });
      } else if (entry.isFile()) {
        bytes += statSync(absolute).size;
        if (bytes > MAX_STUDIO_BYTES) throw tooLarge(directory, `more than ${MAX_STUDIO_BYTES} bytes`);
        files.push({ relative, absolute });
      }
    }
  }
  return files;
}

function tooLarge(directory: string, what: string): SkillboxError {
  return new SkillboxError(
    "SERVER_CONFIG_INVALID",
    `createHttpApp: \`studio.directory\` (${directory}) holds ${what}, which is no Studio build; ` +
      "point it at the built Studio (packages/studio/dist/app after `pnpm build`) or pass `studio: false`",
    { data: { directory } },
  );
}

import { realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";

/** What a host path becomes in a caller's text: this, a slash and the path's last segment. */
export const HOST_PATH_PLACEHOLDER = "…";

/** Characters that end a path in running text: whitespace, quotes, brackets and separators. */
const PATH_END = "\\s'\"`<>()\\[\\]{},;";

const realPaths = new Map<string, string>();

/** `path` with symlinks resolved (macOS's /tmp is /private/tmp), cached: the roots rarely change. */
function realPathOf(path: string): string {
  let real = realPaths.get(path);
  if (real === undefined) {
    try {
      real = realpathSync(path);
    } catch {
      real = path;
    }
    realPaths.set(path, real);
  }
  return real;
}

/**
 * The folders whose contents are the host's business: the working folder (where the host's
 * skills and database usually live), the temp folder (snapshots, sandboxes) and the home folder,
 * as given and with symlinks resolved. Read on every call: the working folder can change.
 * `/` is never a root, or every absolute path would be one.
 */
function hostRoots(): string[] {
  const given = [process.cwd(), tmpdir(), homedir()].filter((root) => root !== "");
  const roots = new Set([...given, ...given.map(realPathOf)].map((root) => root.replace(/\/+$/, "")));
  roots.delete("");
  // Longest first: a root inside another (the cwd inside the home folder) wins the match.
  return [...roots].sort((left, right) => right.length - left.length);
}

function escapeForPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * `text` with every absolute path (or `file:` URL) under one of the host's own folders — the
 * working folder, the temp folder, the home folder, also as their real paths — replaced by `…/`
 * and its last segment: `/tmp/skills/echo/index.mjs:3:7` becomes `…/index.mjs:3:7`. The name
 * keeps the message useful; the folders (user names, layout, snapshot hashes) stay on the host.
 * A path that only looks like one of those, inside a URL (`https://example.com/tmp/x`) or a
 * longer name (`/tmpfiles`), is left alone.
 */
export function scrubHostPaths(text: string): string {
  const roots = hostRoots();
  if (roots.length === 0 || !text.includes("/")) return text;
  const pattern = new RegExp(
    // Not inside a URL or a longer word: a path starts the text or follows a separator.
    `(?<![\\w.~/\\]-])(?:file://)?(?:${roots.map(escapeForPattern).join("|")})` +
      // The root itself, or a path below it; then the path must end (`/tmpfiles` is not `/tmp`).
      `(?:/[^${PATH_END}]*)?(?![^${PATH_END}])`,
    "g",
  );
  return text.replace(pattern, (path) => {
    const lastSegment =
      path
        .split("/")
        .filter((segment) => segment !== "")
        .at(-1) ?? "";
    return `${HOST_PATH_PLACEHOLDER}/${lastSegment}`;
  });
}

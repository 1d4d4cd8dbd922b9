import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";

/** A stored `200` answer that GitHub can confirm with a `304 Not Modified`. */
export interface CachedResponse {
  etag: string;
  /** The body as received (parsed again on every hit, so callers never share mutable objects). */
  bodyText: string;
  /** The `Link` header of that answer, so a cached page still knows its next page. */
  link: string | null;
}

/** The cache the GitHub skills share: one per process. */
export type GithubEtagCache = LRUCache<string, CachedResponse>;

/** Bounds: plenty for repeated dashboards, small enough never to matter for memory. */
const MAX_ENTRIES = 1_000;
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;

const CACHE_KEY = Symbol.for("skillbox.github.etag-cache");

function createEtagCache(): GithubEtagCache {
  return new LRUCache<string, CachedResponse>({
    max: MAX_ENTRIES,
    maxSize: MAX_TOTAL_BYTES,
    // UTF-16 length is close enough to bytes for a bound; an answer larger than the total is not stored.
    sizeCalculation: (entry, key) => entry.bodyText.length + (entry.link?.length ?? 0) + key.length,
  });
}

/**
 * The ETag cache of every GitHub skill in this process. It lives on `globalThis` because each
 * member skill module is imported on its own and re-imported on hot reload; a module-level cache
 * would split into copies and be thrown away on every reload.
 */
export function githubEtagCache(): GithubEtagCache {
  const holder = globalThis as { [CACHE_KEY]?: GithubEtagCache };
  holder[CACHE_KEY] ??= createEtagCache();
  return holder[CACHE_KEY];
}

/**
 * The cache key of a URL for a caller. It includes a hash of the token, never the token, so callers
 * with different tokens (or none) never see each other's answers, e.g. a private repository.
 */
export function etagCacheKey(url: string, token: string | undefined): string {
  const identity =
    token === undefined ? "anonymous" : createHash("sha256").update(token).digest("hex").slice(0, 32);
  return `${identity} ${url}`;
}

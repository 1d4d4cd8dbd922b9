/** One parsed entry of the host allowlist. */
interface HostPattern {
  /** Lowercase host name, IPv4 address or bracketed IPv6 address, without a trailing dot. */
  host: string;
  /** `*.example.com`: matches names below `host`, not `host` itself. */
  subdomains: boolean;
  /** Only this port when set; any port when undefined. */
  port: number | undefined;
}

/** Which hosts the browser may talk to: `allows(url)` answers for one URL. */
export interface HostAllowlist {
  /** The patterns as configured, for messages. */
  readonly patterns: readonly string[];
  /** True when `url` is http(s) and its host (and port) match a pattern. */
  allows(url: URL | string): boolean;
}

const PATTERN_SHAPE = /^(\*\.)?(\[[0-9a-f:.]+\]|[^:/[\]@?#\s*]+)(?::(\d{1,5}))?$/i;

/** Lowercases and drops one trailing dot, so `Example.COM.` and `example.com` compare equal. */
function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/**
 * Parses one pattern (`example.com`, `*.example.com`, `127.0.0.1:8080`, `[::1]:3000`); returns an
 * error text instead when it is malformed. Host names go through the WHATWG URL parser so they
 * compare the way the browser spells them (punycode, canonical IPv4/IPv6).
 */
export function parseHostPattern(pattern: string): HostPattern | string {
  const match = PATTERN_SHAPE.exec(pattern);
  if (match === null) {
    return `${JSON.stringify(pattern)} is not a host pattern (expected forms: example.com, *.example.com, 127.0.0.1:8080, [::1]:8080 or *)`;
  }
  const [, wildcard, rawHost = "", rawPort] = match;
  let host: string;
  try {
    host = normalizeHost(new URL(`http://${rawHost}/`).hostname);
  } catch {
    return `${JSON.stringify(pattern)} has an invalid host name`;
  }
  const port = rawPort === undefined ? undefined : Number(rawPort);
  if (port !== undefined && (port < 1 || port > 65_535)) {
    return `${JSON.stringify(pattern)} has a port outside 1–65535`;
  }
  return { host, subdomains: wildcard !== undefined, port };
}

function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

function matches(pattern: HostPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false;
  return pattern.subdomains ? host.endsWith(`.${pattern.host}`) : host === pattern.host;
}

/**
 * Compiles host patterns into an allowlist. `*` allows every host; an empty list allows none.
 * A pattern without a port allows every port of that host. Only http and https URLs are ever
 * allowed. Throws a `TypeError` naming the first malformed pattern (settings turn it into
 * `CONFIG_INVALID`).
 */
export function createHostAllowlist(patterns: readonly string[]): HostAllowlist {
  const anyHost = patterns.includes("*");
  const parsed: HostPattern[] = [];
  for (const pattern of patterns) {
    if (pattern === "*") continue;
    const result = parseHostPattern(pattern);
    if (typeof result === "string") throw new TypeError(result);
    parsed.push(result);
  }
  return {
    patterns: [...patterns],
    allows(url) {
      let parsedUrl: URL;
      try {
        parsedUrl = typeof url === "string" ? new URL(url) : url;
      } catch {
        return false;
      }
      if (parsedUrl.protocol !== "http:" && parsedUrl.protocol !== "https:") return false;
      if (anyHost) return true;
      const host = normalizeHost(parsedUrl.hostname);
      const port = effectivePort(parsedUrl);
      return parsed.some((pattern) => matches(pattern, host, port));
    },
  };
}

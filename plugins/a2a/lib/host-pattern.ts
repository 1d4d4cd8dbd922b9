/**
 * A `host[:port]` pattern of the A2A settings: `*` (any host), `agent.example.com`,
 * `*.example.com` (any subdomain, not the apex), `127.0.0.1`, `[::1]`, each optionally with
 * `:port` (without one, any port matches).
 */
export interface HostPattern {
  /** The pattern as written, lower-cased. */
  text: string;
  matches(url: URL): boolean;
}

const HOST_NAME = /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
const IPV6_LITERAL = /^\[[0-9a-f:.]+\]$/;

/** Parses a pattern; `undefined` when it is not one (the settings report it). */
export function parseHostPattern(entry: string): HostPattern | undefined {
  const text = entry.trim().toLowerCase();
  if (text === "*") return { text, matches: () => true };
  const portMatch = /^(.*?)(?::(\d{1,5}))?$/.exec(text);
  const host = portMatch?.[1] ?? "";
  const port = portMatch?.[2] === undefined ? undefined : Number(portMatch[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  if (!HOST_NAME.test(host) && !IPV6_LITERAL.test(host)) return undefined;
  const wildcard = host.startsWith("*.");
  const suffix = wildcard ? host.slice(1) : host;
  return {
    text,
    matches(url) {
      const hostname = url.hostname.toLowerCase().replace(/\.$/, "");
      const hostMatches = wildcard
        ? hostname.endsWith(suffix) && hostname.length > suffix.length
        : hostname === host;
      return hostMatches && (port === undefined || effectivePort(url) === port);
    },
  };
}

/** The port a URL connects to: its own, else the scheme's default. */
function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

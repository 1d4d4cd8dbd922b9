import { isIPv4, isIPv6 } from "node:net";

/**
 * True when `hostname` can only be reached from this machine: `localhost` (and names under
 * `.localhost`, which resolvers keep local), 127.0.0.0/8, `::1` and its IPv4-mapped form.
 * Square brackets around an IPv6 address (as in a Host header) are accepted.
 */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (isIPv4(name)) return name.startsWith("127.");
  if (isIPv6(name)) {
    if (name === "::1" || name === "0:0:0:0:0:0:0:1") return true;
    const mapped = /^(?:0:0:0:0:0:|::)ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(name);
    return mapped?.[1]?.startsWith("127.") === true;
  }
  return false;
}

import ipaddr from "ipaddr.js";
import { classifyAddress, parseIpLiteral } from "./classify-address.js";

/** Why an address was refused, for the error message and `data`. */
export interface AddressRefusal {
  host: string;
  address: string;
  range: string;
}

/** Decides whether the SSRF guard lets a host or one of its addresses through. */
export interface AddressPolicy {
  /** True when the host name itself is listed in the allowlist (then whatever it resolves to is trusted). */
  isHostExempt(host: string): boolean;
  /** A refusal when `address` (reached through `host`) is not public and not allowed; otherwise `undefined`. */
  check(host: string, address: string): AddressRefusal | undefined;
  /**
   * A refusal when `host` is an IP literal (`127.0.0.1`, `[::1]`, as a URL's `hostname` gives it)
   * that is not public and not allowed; `undefined` for any host name. Literals never reach a
   * `lookup`, so check them with this before connecting; names are checked by
   * `createGuardedLookup` on every address they resolve to.
   */
  checkLiteral(host: string): AddressRefusal | undefined;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** Lower-cased, without brackets or the trailing root dot, so `LOCALHOST.` and `localhost` compare equal. */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  const bare = lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
  return bare.endsWith(".") ? bare.slice(0, -1) : bare;
}

/** True when `entry` is an IP address or CIDR range (anything else in the allowlist is a host name). */
export function isAddressEntry(entry: string): boolean {
  return ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry);
}

function toRange(entry: string): Range {
  if (ipaddr.isValidCIDR(entry)) {
    const [address, bits] = ipaddr.parseCIDR(entry);
    // An IPv4-mapped range is compared as the IPv4 range it covers, like the addresses it is matched against.
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
    }
    return [address, bits];
  }
  const address = ipaddr.process(entry);
  return [address, address.kind() === "ipv4" ? 32 : 128];
}

function inRange(address: Address, [base, bits]: Range): boolean {
  return address.kind() === base.kind() && address.match(base, bits);
}

/**
 * Builds an SSRF policy from an allowlist of exemptions (`SKILLBOX_HTTP_ALLOW_PRIVATE`,
 * `SKILLBOX_BROWSER_ALLOW_PRIVATE`): entries are host names, IP addresses or CIDR ranges. Public
 * addresses always pass; loopback, private, link-local and other special ranges pass only when
 * listed (a listed host name passes whatever it resolves to).
 */
export function createAddressPolicy(allowPrivate: readonly string[]): AddressPolicy {
  const hosts = new Set<string>();
  const ranges: Range[] = [];
  for (const entry of allowPrivate) {
    const normalized = normalizeHost(entry.trim());
    if (isAddressEntry(normalized)) ranges.push(toRange(normalized));
    else hosts.add(normalized);
  }
  const isHostExempt = (host: string) => hosts.has(normalizeHost(host));
  const policy: AddressPolicy = {
    isHostExempt,
    checkLiteral(host) {
      if (parseIpLiteral(host) === undefined || isHostExempt(host)) return undefined;
      return policy.check(host, host);
    },
    check(host, address) {
      // process() turns ::ffff:a.b.c.d into a.b.c.d, so allowing 127.0.0.1 also allows its mapped form.
      const parsed = ipaddr.process(normalizeHost(address));
      const addressClass = classifyAddress(parsed);
      if (addressClass.public) return undefined;
      if (ranges.some((range) => inRange(parsed, range))) return undefined;
      return { host: normalizeHost(host), address: parsed.toString(), range: addressClass.range };
    },
  };
  return policy;
}

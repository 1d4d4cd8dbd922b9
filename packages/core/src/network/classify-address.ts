import ipaddr from "ipaddr.js";

/** Where an address points: `public` is routable on the internet; anything else is refused by default. */
export interface AddressClass {
  /** True when the address is ordinary global unicast. */
  public: boolean;
  /** The ipaddr.js range name (`loopback`, `private`, `linkLocal`, …), qualified when embedded (`ipv4Mapped 127.0.0.1: loopback`). */
  range: string;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Global unicast IPv6 lives in 2000::/3; everything outside is reserved, local or special. */
const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3");

/** IPv6 ranges that carry an IPv4 address in their low 32 bits (the IPv4 address is what gets reached). */
const lowBitsEmbedding = new Set(["ipv4Mapped", "rfc6145", "rfc6052"]);

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function classifyIpv4(address: ipaddr.IPv4): AddressClass {
  const range = address.range();
  return { public: range === "unicast", range };
}

/** The IPv4 addresses a 6to4 or Teredo address tunnels to (RFC 3056, RFC 4380). */
function tunnelledIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const parts = address.parts;
  const part = (index: number) => parts[index] ?? 0;
  if (range === "6to4") return [ipv4FromParts(part(1), part(2))];
  // Teredo: the server address in plain bits 32–63, the client's public address obfuscated (inverted) in 96–127.
  return [ipv4FromParts(part(2), part(3)), ipv4FromParts(~part(6) & 0xffff, ~part(7) & 0xffff)];
}

function classifyEmbedded(range: string, embedded: ipaddr.IPv4[]): AddressClass {
  for (const inner of embedded) {
    const innerClass = classifyIpv4(inner);
    if (!innerClass.public)
      return { public: false, range: `${range} ${inner.toString()}: ${innerClass.range}` };
  }
  return { public: true, range };
}

function classifyIpv6(address: ipaddr.IPv6): AddressClass {
  const range = address.range();
  const parts = address.parts;
  if (lowBitsEmbedding.has(range)) {
    return classifyEmbedded(range, [ipv4FromParts(parts[6] ?? 0, parts[7] ?? 0)]);
  }
  if (range === "6to4" || range === "teredo") return classifyEmbedded(range, tunnelledIpv4(address, range));
  if (range !== "unicast") return { public: false, range };
  // ipaddr.js calls IPv4-compatible (::a.b.c.d) and other unassigned space "unicast"; only 2000::/3 is global.
  if (!address.match(globalUnicast)) return { public: false, range: "reserved" };
  return { public: true, range };
}

/**
 * Classifies an IP address for the SSRF guard. Embedded IPv4 addresses (IPv4-mapped, NAT64, 6to4,
 * Teredo) are judged by the IPv4 address they lead to, so `::ffff:127.0.0.1` counts as loopback.
 */
export function classifyAddress(address: Address): AddressClass {
  return address.kind() === "ipv4"
    ? classifyIpv4(address as ipaddr.IPv4)
    : classifyIpv6(address as ipaddr.IPv6);
}

/** Parses an IP literal (IPv6 with or without brackets); `undefined` for host names. */
export function parseIpLiteral(host: string): Address | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  // Only canonical forms: the URL parser has already turned 2130706433 or 0x7f.1 into dotted decimal.
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return undefined;
}

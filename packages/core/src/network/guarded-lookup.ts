import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import type { AddressPolicy, AddressRefusal } from "./address-policy.js";
import { AddressRefusedError } from "./address-refused-error.js";

/** The callback of a `dns.lookup`-compatible function, as `net.connect` and `http.request` call it. */
export type GuardedLookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `dns.lookup`-compatible function, for the `lookup` option of `net.connect`, `http.request` and undici. */
export type GuardedLookup = (
  hostname: string,
  options: LookupOptions,
  callback: GuardedLookupCallback,
) => void;

/**
 * A `lookup` that resolves every address of a host and fails when any of them is one the policy
 * refuses (unless the host itself is exempt), with the error `refuse` makes (by default an
 * {@link AddressRefusedError}). Sockets given it connect only to addresses that were checked, so
 * DNS rebinding between a check and the connect cannot slip through. IP literals never reach a
 * `lookup`: check those with `policy.checkLiteral` first.
 */
export function createGuardedLookup(
  policy: AddressPolicy,
  refuse: (refusal: AddressRefusal) => Error = (refusal) => new AddressRefusedError(refusal),
): GuardedLookup {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!policy.isHostExempt(hostname)) {
        for (const { address } of addresses) {
          const refusal = policy.check(hostname, address);
          if (refusal) return callback(refuse(refusal) as NodeJS.ErrnoException, []);
        }
      }
      // net asks for all addresses when it races IPv4 and IPv6 (autoSelectFamily), otherwise for one.
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), []);
      return callback(null, first.address, first.family);
    });
  };
}

import type { AddressRefusal } from "./address-policy.js";

/**
 * What a guarded connection fails with when the SSRF guard refuses an address (the default error
 * of `createGuardedLookup`). It stays inside the code that connects: catch it there (`instanceof`)
 * and answer with the caller-facing refusal (`URL_REFUSED`, a proxy's 403), built from `refusal`.
 */
export class AddressRefusedError extends Error {
  constructor(readonly refusal: AddressRefusal) {
    super(`address ${refusal.address} of ${refusal.host} is ${refusal.range}`);
    this.name = "AddressRefusedError";
  }
}

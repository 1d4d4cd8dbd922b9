import type { LookupAddress } from "node:dns";
import {
  AddressRefusedError,
  createAddressPolicy,
  createGuardedLookup,
  type GuardedLookup,
} from "@skillbox/core";
import { describe, expect, it } from "vitest";

/** Runs a guarded lookup the way `net.connect` does, as a promise. */
function resolve(
  lookup: GuardedLookup,
  hostname: string,
  all: boolean,
): Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }> {
  return new Promise((settle) => lookup(hostname, { all }, (error, address) => settle({ error, address })));
}

// `localhost` resolves from the hosts file, so these tests need no network.
describe("createGuardedLookup", () => {
  it("refuses a name that resolves to loopback with an AddressRefusedError naming the address", async () => {
    const { error } = await resolve(createGuardedLookup(createAddressPolicy([])), "localhost", false);
    expect(error).toBeInstanceOf(AddressRefusedError);
    expect((error as unknown as AddressRefusedError).refusal).toMatchObject({
      host: "localhost",
      range: "loopback",
    });
  });

  it("makes the error `refuse` builds", async () => {
    const made = new Error("refused here");
    const { error } = await resolve(
      createGuardedLookup(createAddressPolicy([]), () => made),
      "localhost",
      true,
    );
    expect(error).toBe(made);
  });

  it("lets an exempt name or an allowed range through, one address or all as asked", async () => {
    const exempt = createGuardedLookup(createAddressPolicy(["localhost"]));
    const one = await resolve(exempt, "localhost", false);
    expect(one.error).toBeNull();
    expect(typeof one.address).toBe("string");
    const ranges = createGuardedLookup(createAddressPolicy(["127.0.0.0/8", "::1"]));
    const all = await resolve(ranges, "localhost", true);
    expect(all.error).toBeNull();
    expect(Array.isArray(all.address) && all.address.length > 0).toBe(true);
  });
});

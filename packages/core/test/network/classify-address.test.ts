import { classifyAddress, createAddressPolicy, parseIpLiteral } from "@skillbox/core";
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";

function classify(address: string) {
  return classifyAddress(ipaddr.parse(address));
}

describe("classifyAddress", () => {
  it.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["2606:4700:4700::1111"],
    ["::ffff:8.8.8.8"],
    ["2002:0808:0808::1"],
    ["64:ff9b::808:808"],
  ])("counts %s as public", (address) => {
    expect(classify(address).public).toBe(true);
  });

  it.each([
    ["127.0.0.1", "loopback"],
    ["10.0.0.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
    ["240.0.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:10.0.0.1", "ipv4Mapped 10.0.0.1: private"],
    ["2002:a9fe:a9fe::", "6to4 169.254.169.254: linkLocal"],
    // Teredo: server 65.54.227.120, client 192.168.0.1 stored inverted (3f57:ff fe).
    ["2001:0:4136:e378:8000:63bf:3f57:fffe", "teredo 192.168.0.1: private"],
    ["::7f00:1", "reserved"],
    ["2001:db8::1", "reserved"],
  ])("refuses %s as %s", (address, range) => {
    expect(classify(address)).toEqual({ public: false, range });
  });
});

describe("parseIpLiteral", () => {
  it("parses canonical IPv4 and bracketed IPv6, and leaves host names alone", () => {
    expect(parseIpLiteral("127.0.0.1")?.toString()).toBe("127.0.0.1");
    expect(parseIpLiteral("[::1]")?.toString()).toBe("::1");
    expect(parseIpLiteral("localhost")).toBeUndefined();
    expect(parseIpLiteral("example.com")).toBeUndefined();
  });
});

describe("createAddressPolicy", () => {
  it("allows listed addresses, CIDR ranges (also in IPv4-mapped form) and host names", () => {
    const policy = createAddressPolicy(["127.0.0.1", "10.0.0.0/8", "fd00::/8", "Internal.Example."]);
    expect(policy.check("x", "127.0.0.1")).toBeUndefined();
    expect(policy.check("x", "::ffff:127.0.0.1")).toBeUndefined();
    expect(policy.check("x", "10.200.3.4")).toBeUndefined();
    expect(policy.check("x", "fd12::1")).toBeUndefined();
    expect(policy.check("x", "127.0.0.2")).toEqual({ host: "x", address: "127.0.0.2", range: "loopback" });
    expect(policy.check("x", "192.168.0.1")).toMatchObject({ range: "private" });
    expect(policy.isHostExempt("internal.example")).toBe(true);
    expect(policy.isHostExempt("other.example")).toBe(false);
  });

  it("always allows public addresses", () => {
    expect(createAddressPolicy([]).check("example.com", "93.184.215.14")).toBeUndefined();
  });

  it("checks IP literals in the forms a URL's hostname gives them, and leaves host names to the lookup", () => {
    const policy = createAddressPolicy(["10.0.0.0/8"]);
    expect(policy.checkLiteral("127.0.0.1")).toEqual({
      host: "127.0.0.1",
      address: "127.0.0.1",
      range: "loopback",
    });
    expect(policy.checkLiteral(new URL("http://[::1]/").hostname)).toMatchObject({ range: "loopback" });
    expect(policy.checkLiteral(new URL("http://[::ffff:7f00:1]/").hostname)).toMatchObject({
      address: "127.0.0.1",
      range: "loopback",
    });
    expect(policy.checkLiteral(new URL("http://0x7f.1/").hostname)).toMatchObject({ range: "loopback" });
    expect(policy.checkLiteral("10.1.2.3")).toBeUndefined();
    expect(policy.checkLiteral("93.184.215.14")).toBeUndefined();
    expect(policy.checkLiteral("localhost")).toBeUndefined();
  });
});

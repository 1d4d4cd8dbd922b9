import { describe, expect, it } from "vitest";
import { createHostAllowlist, parseHostPattern } from "../lib/host-allowlist.ts";

describe("createHostAllowlist", () => {
  it("allows nothing when empty", () => {
    const allowlist = createHostAllowlist([]);
    expect(allowlist.allows("https://example.com/")).toBe(false);
    expect(allowlist.allows("http://127.0.0.1:8080/")).toBe(false);
  });

  it("matches an exact host on any port, case-insensitively", () => {
    const allowlist = createHostAllowlist(["Example.com"]);
    expect(allowlist.allows("https://example.com/a?b")).toBe(true);
    expect(allowlist.allows("http://EXAMPLE.COM:8080/")).toBe(true);
    expect(allowlist.allows("https://example.com./")).toBe(true);
    expect(allowlist.allows("https://www.example.com/")).toBe(false);
    expect(allowlist.allows("https://example.com.evil.net/")).toBe(false);
    expect(allowlist.allows("https://notexample.com/")).toBe(false);
  });

  it("matches subdomains only with *.", () => {
    const allowlist = createHostAllowlist(["*.example.com"]);
    expect(allowlist.allows("https://www.example.com/")).toBe(true);
    expect(allowlist.allows("https://a.b.example.com/")).toBe(true);
    expect(allowlist.allows("https://example.com/")).toBe(false);
    expect(allowlist.allows("https://badexample.com/")).toBe(false);
  });

  it("restricts a pattern with a port to that port, counting default ports", () => {
    const allowlist = createHostAllowlist(["127.0.0.1:8080", "example.org:443", "[::1]:3000"]);
    expect(allowlist.allows("http://127.0.0.1:8080/")).toBe(true);
    expect(allowlist.allows("http://127.0.0.1:8081/")).toBe(false);
    expect(allowlist.allows("http://127.0.0.1/")).toBe(false);
    expect(allowlist.allows("https://example.org/")).toBe(true);
    expect(allowlist.allows("http://example.org/")).toBe(false);
    expect(allowlist.allows("http://[::1]:3000/")).toBe(true);
    expect(allowlist.allows("http://[::1]:3001/")).toBe(false);
  });

  it("compares hosts the way the browser spells them", () => {
    const allowlist = createHostAllowlist(["bücher.example", "127.0.0.1"]);
    expect(allowlist.allows("https://xn--bcher-kva.example/")).toBe(true);
    // 2130706433 and 0x7f.1 are other spellings of 127.0.0.1 that URL parsing canonicalises.
    expect(allowlist.allows("http://2130706433/")).toBe(true);
    expect(allowlist.allows("http://0x7f.1/")).toBe(true);
  });

  it("allows any http(s) host with *, and never another scheme", () => {
    const allowlist = createHostAllowlist(["*"]);
    expect(allowlist.allows("https://anything.test/")).toBe(true);
    expect(allowlist.allows("http://10.0.0.1:9/")).toBe(true);
    for (const url of [
      "file:///etc/passwd",
      "data:text/html,hi",
      "javascript:1",
      "chrome://version",
      "ws://a.test/",
    ]) {
      expect(allowlist.allows(url)).toBe(false);
    }
    expect(allowlist.allows("not a url")).toBe(false);
  });

  it.each([
    "http://example.com",
    "example.com/path",
    "user@example.com",
    "exa mple.com",
    "example.com:0",
    "example.com:99999",
    "*example.com",
    "a.*.example.com",
    "",
  ])("throws on the malformed pattern %j", (pattern) => {
    expect(() => createHostAllowlist([pattern])).toThrow(TypeError);
  });
});

describe("parseHostPattern", () => {
  it("returns the host, the wildcard and the port", () => {
    expect(parseHostPattern("*.Example.com:8443")).toEqual({
      host: "example.com",
      subdomains: true,
      port: 8443,
    });
    expect(parseHostPattern("[::1]")).toEqual({ host: "[::1]", subdomains: false, port: undefined });
  });
});

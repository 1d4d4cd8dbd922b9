import { describe, expect, it } from "vitest";
import { useHttpRequestTestBed } from "./helpers/http-request-test-bed.js";

// A retry would be a second chance to connect, so one is allowed: refusals must not use it.
const { serve, hostWith, request } = useHttpRequestTestBed({
  executeOptions: { maxRetries: 1, retry: { initialDelayMs: 1 } },
});

describe("createHttpRequestSkill SSRF guard", () => {
  it("refuses a loopback server when loopback is not allowed, before connecting", async () => {
    const server = await serve();
    const execution = await request(hostWith(), { url: `${server.origin}/` });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("127.0.0.1");
    expect(execution.error?.message).toContain("loopback");
    expect(execution.error?.message).toContain("SKILLBOX_HTTP_ALLOW_PRIVATE");
    expect(execution.error?.data).toMatchObject({ address: "127.0.0.1", range: "loopback" });
    expect(execution.attempts).toBe(1);
    expect(server.connections).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a host name that resolves to loopback, when it resolves (before connecting)", async () => {
    const server = await serve();
    const execution = await request(hostWith(), { url: `http://localhost:${server.port}/` });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("localhost");
    expect(execution.error?.data).toMatchObject({ host: "localhost", range: "loopback" });
    expect(server.connections).toBe(0);
  });

  it.each([
    ["a private 10.x address", "http://10.1.2.3/", "private"],
    ["a private 192.168.x address", "http://192.168.1.1/", "private"],
    ["a private 172.16.x address", "http://172.16.0.1/", "private"],
    ["the cloud metadata address", "http://169.254.169.254/latest/meta-data/", "linkLocal"],
    ["IPv6 loopback", "http://[::1]/", "loopback"],
    ["the unspecified address", "http://0.0.0.0/", "unspecified"],
    ["decimal-encoded loopback", "http://2130706433/", "loopback"],
    ["hex-encoded loopback", "http://0x7f000001/", "loopback"],
    ["octal-encoded loopback", "http://0177.0.0.1/", "loopback"],
    ["IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]/", "loopback"],
    ["IPv4-mapped IPv6 metadata", "http://[::ffff:a9fe:a9fe]/", "linkLocal"],
    ["carrier-grade NAT", "http://100.64.0.1/", "carrierGradeNat"],
    ["an IPv6 unique local address", "http://[fd00::1]/", "uniqueLocal"],
    ["an IPv6 link-local address", "http://[fe80::1]/", "linkLocal"],
    ["multicast", "http://224.0.0.1/", "multicast"],
    ["broadcast", "http://255.255.255.255/", "broadcast"],
    ["6to4 wrapping loopback", "http://[2002:7f00:1::]/", "6to4 127.0.0.1: loopback"],
    ["NAT64 wrapping a private address", "http://[64:ff9b::a00:1]/", "rfc6052 10.0.0.1: private"],
  ])("refuses %s (%s) without connecting", async (_label, url, range) => {
    const execution = await request(hostWith(), { url });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("SKILLBOX_HTTP_ALLOW_PRIVATE");
    expect(execution.error?.data).toMatchObject({ range });
  });

  it("lets through addresses, ranges and host names listed in allowPrivate", async () => {
    const server = await serve();
    const byRange = await request(hostWith({ allowPrivate: ["127.0.0.0/8"] }), { url: server.origin });
    expect(byRange.output?.status).toBe(200);
    const byName = await request(hostWith({ allowPrivate: ["LOCALHOST."] }), {
      url: `http://localhost:${server.port}/`,
    });
    expect(byName.output?.status).toBe(200);
    const mapped = await request(hostWith({ allowPrivate: ["127.0.0.1"] }), {
      url: `http://[::ffff:127.0.0.1]:${server.port}/`,
    });
    expect(mapped.output?.status).toBe(200);
  });

  it("refuses a redirect from an allowed server to a private address", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/iam" });
      response.end();
    });
    const execution = await request(hostWith({ allowPrivate: ["127.0.0.1"] }), { url: server.origin });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("169.254.169.254");
    expect(server.requests).toHaveLength(1);
  });

  it("refuses a redirect to a loopback address that is not allowed", async () => {
    const target = await serve();
    const server = await serve((_request, response) => {
      response.writeHead(301, { location: `http://[::1]:${target.port}/` });
      response.end();
    });
    const execution = await request(hostWith({ allowPrivate: ["127.0.0.1"] }), { url: server.origin });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.data).toMatchObject({ address: "::1", range: "loopback" });
    expect(target.connections).toBe(0);
  });

  it("refuses a redirect to a scheme other than http(s)", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(302, { location: "file:///etc/passwd" });
      response.end();
    });
    const execution = await request(hostWith({ allowPrivate: ["127.0.0.1"] }), { url: server.origin });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("file:");
    expect(execution.error?.message).toContain(`redirected from ${server.origin}`);
  });

  it.each([["ftp://127.0.0.1/file"], ["file:///etc/passwd"]])("refuses the non-http URL %s", async (url) => {
    const execution = await request(hostWith({ allowPrivate: ["127.0.0.1"] }), { url });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("only http: and https:");
  });

  it("refuses credentials in the URL without echoing them", async () => {
    const server = await serve();
    const execution = await request(hostWith({ allowPrivate: ["127.0.0.1"] }), {
      url: `http://user:hunter2@127.0.0.1:${server.port}/`,
    });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("Authorization header");
    expect(JSON.stringify(execution.error)).not.toContain("hunter2");
    expect(server.connections).toBe(0);
  });
});

import { once } from "node:events";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { createAddressPolicy } from "@skillbox/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AllowlistProxy, startAllowlistProxy } from "../lib/allowlist-proxy.ts";
import { createHostAllowlist } from "../lib/host-allowlist.ts";
import { type PageServer, startPageServer } from "./helpers/page-server.ts";

let allowed: PageServer;
let other: PageServer;
const proxies: AllowlistProxy[] = [];

beforeAll(async () => {
  const cookies = (_request: IncomingMessage, response: import("node:http").ServerResponse) => {
    response.writeHead(
      200,
      [
        ["content-type", "text/plain"],
        ["set-cookie", "a=1"],
        ["set-cookie", "b=2"],
      ].flat(),
    );
    response.end("hello through the proxy");
  };
  allowed = await startPageServer({ "/": cookies });
  other = await startPageServer({ "/": "other" });
});

afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
});

afterAll(async () => {
  await allowed?.close();
  await other?.close();
});

/** The test servers all listen on loopback, which the proxy reaches only when told to. */
const LOOPBACK_ALLOWED = createAddressPolicy(["127.0.0.1"]);

async function proxyFor(refused: string[], patterns = [allowed.host]): Promise<AllowlistProxy> {
  const proxy = await startAllowlistProxy({
    allowlist: createHostAllowlist(patterns),
    addressPolicy: LOOPBACK_ALLOWED,
    onRefused: (url) => refused.push(url),
  });
  proxies.push(proxy);
  return proxy;
}

/** A proxy whose allowlist is `*` and whose address policy allows `allowPrivate` only. */
async function anyHostProxy(allowPrivate: string[], refused: string[] = []): Promise<AllowlistProxy> {
  const proxy = await startAllowlistProxy({
    allowlist: createHostAllowlist(["*"]),
    addressPolicy: createAddressPolicy(allowPrivate),
    onRefused: (url, reason) => refused.push(`${reason} ${url}`),
  });
  proxies.push(proxy);
  return proxy;
}

/** Sends `GET <absolute url>` to the proxy, as a browser does for plain http. */
async function getThrough(
  proxy: AllowlistProxy,
  url: string,
): Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }> {
  const { hostname, port } = new URL(proxy.server);
  const request = httpRequest({ host: hostname, port, path: url, headers: { host: new URL(url).host } });
  request.end();
  const [response] = (await once(request, "response")) as [IncomingMessage];
  let body = "";
  for await (const chunk of response) body += chunk;
  return { status: response.statusCode ?? 0, headers: response.headers, body };
}

/** Opens `CONNECT authority` on the proxy; resolves with the status and the tunnel socket. */
async function connectThrough(
  proxy: AllowlistProxy,
  authority: string,
): Promise<{ status: number; socket: Socket }> {
  const { hostname, port } = new URL(proxy.server);
  const request = httpRequest({ host: hostname, port, method: "CONNECT", path: authority });
  request.end();
  const [response, socket] = (await once(request, "connect")) as [IncomingMessage, Socket];
  return { status: response.statusCode ?? 0, socket };
}

describe("startAllowlistProxy", () => {
  it("forwards plain http to an allowed host, keeping repeated headers", async () => {
    const refused: string[] = [];
    const proxy = await proxyFor(refused);
    const response = await getThrough(proxy, allowed.url("/"));
    expect(response.status).toBe(200);
    expect(response.body).toBe("hello through the proxy");
    expect(response.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(refused).toEqual([]);
  });

  it("answers 403 for another host and reports it, without contacting that host", async () => {
    const refused: string[] = [];
    const proxy = await proxyFor(refused);
    const response = await getThrough(proxy, other.url("/secret?token=1"));
    expect(response.status).toBe(403);
    expect(response.body).toContain("SKILLBOX_BROWSER_ALLOWED_HOSTS");
    expect(refused).toEqual([other.url("/secret?token=1")]);
    expect(other.requests).toEqual([]);
  });

  it("tunnels CONNECT to an allowed host", async () => {
    const proxy = await proxyFor([]);
    const { status, socket } = await connectThrough(proxy, allowed.host);
    expect(status).toBe(200);
    socket.write(`GET / HTTP/1.1\r\nhost: ${allowed.host}\r\nconnection: close\r\n\r\n`);
    let reply = "";
    for await (const chunk of socket) reply += chunk;
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    expect(reply).toContain("hello through the proxy");
  });

  it("refuses CONNECT to another host and reports it", async () => {
    const refused: string[] = [];
    const proxy = await proxyFor(refused);
    const { status, socket } = await connectThrough(proxy, other.host);
    socket.destroy();
    expect(status).toBe(403);
    expect(refused).toEqual([`https://${other.host}/`]);
    expect(other.requests).toEqual([]);
  });

  it("sends the checked host as Host, whatever Host header the client sent", async () => {
    const seen: (string | undefined)[] = [];
    const vhosts = await startPageServer({
      "/": (request, response) => {
        seen.push(request.headers.host);
        response.end("ok");
      },
    });
    const proxy = await startAllowlistProxy({
      allowlist: createHostAllowlist([vhosts.host]),
      addressPolicy: LOOPBACK_ALLOWED,
    });
    proxies.push(proxy);
    const { hostname, port } = new URL(proxy.server);
    const request = httpRequest({
      host: hostname,
      port,
      path: vhosts.url("/"),
      headers: { host: "admin.internal" },
    });
    request.end();
    const [response] = (await once(request, "response")) as [IncomingMessage];
    response.resume();
    await once(response, "end");
    await vhosts.close();
    expect(response.statusCode).toBe(200);
    expect(seen).toEqual([vhosts.host]);
  });

  it("answers 502 instead of crashing the host when an allowed server sends a status it cannot pass on", async () => {
    const upstream = createNetServer((socket) => {
      socket.on("error", () => undefined);
      socket.once("data", () => socket.end("HTTP/1.1 099 Odd\r\ncontent-length: 0\r\n\r\n"));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as AddressInfo;
    const proxy = await startAllowlistProxy({
      allowlist: createHostAllowlist([`127.0.0.1:${port}`]),
      addressPolicy: LOOPBACK_ALLOWED,
    });
    proxies.push(proxy);
    const response = await getThrough(proxy, `http://127.0.0.1:${port}/`);
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    expect(response.status).toBe(502);
  });

  it("refuses loopback under the allowlist `*` without contacting it, by IP and by name, plain and tunnelled", async () => {
    const refused: string[] = [];
    const proxy = await anyHostProxy([], refused);
    const byAddress = await getThrough(proxy, other.url("/secret"));
    expect(byAddress.status).toBe(403);
    expect(byAddress.body).toContain("SKILLBOX_BROWSER_ALLOW_PRIVATE");
    const port = new URL(other.origin).port;
    // `localhost` is a name: refused on the address it resolves to.
    expect((await getThrough(proxy, `http://localhost:${port}/secret`)).status).toBe(403);
    for (const authority of [other.host, `localhost:${port}`]) {
      const { status, socket } = await connectThrough(proxy, authority);
      socket.destroy();
      expect(status).toBe(403);
    }
    expect(other.requests).toEqual([]);
    expect(refused).toEqual([
      `address ${other.url("/secret")}`,
      `address http://localhost:${port}/secret`,
      `address https://${other.host}/`,
      `address https://localhost:${port}/`,
    ]);
  });

  it("reaches loopback under the allowlist `*` once SKILLBOX_BROWSER_ALLOW_PRIVATE lists it", async () => {
    const proxy = await anyHostProxy(["127.0.0.1"]);
    const response = await getThrough(proxy, allowed.url("/"));
    expect(response.status).toBe(200);
    expect(response.body).toBe("hello through the proxy");
  });

  it("cuts open tunnels when closed", async () => {
    const proxy = await startAllowlistProxy({
      allowlist: createHostAllowlist([allowed.host]),
      addressPolicy: LOOPBACK_ALLOWED,
    });
    const { socket } = await connectThrough(proxy, allowed.host);
    const closed = once(socket, "close");
    await proxy.close();
    await closed;
    expect(socket.destroyed).toBe(true);
  });
});

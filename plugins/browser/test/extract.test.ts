import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import extract, { createExtractSkill } from "../extract/index.ts";
import { useBrowserTestBed } from "./helpers/browser-test-bed.ts";
import { expectManifestSchemas } from "./helpers/browser-test-host.ts";
import type { PageServer } from "./helpers/page-server.ts";

const HOME = `<!doctype html><title>Home</title>
<h1>Welcome</h1>
<p>Hello <b>reader</b></p>
<p style="display:none">hidden text</p>
<nav id="menu"><a href="/about">About   us</a> <a href="/contact">Contact</a></nav>
<script>document.body.append("added by script")</script>`;

const bed = useBrowserTestBed();
let site: PageServer;
/** Another origin (another port) that is never on the allowlist: it must see no request. */
let outside: PageServer;

beforeAll(async () => {
  outside = await bed.pageServer({ "/": "<title>Outside</title>outside", "/pixel.png": "x", "/data": "x" });
  site = await bed.pageServer({
    "/": HOME,
    "/long": `<title>Long</title><p>${"word ".repeat(2000)}</p>${Array.from({ length: 30 }, (_, index) => `<a href="/page/${index}">page ${index}</a>`).join("")}`,
    "/embeds-outside": `<title>Embeds</title><p>local text</p>
      <img src="${outside.url("/pixel.png")}">
      <img src="/bounce-outside">
      <script>
        fetch(${JSON.stringify(outside.url("/data"))}).catch(() => {});
        navigator.sendBeacon(${JSON.stringify(outside.url("/data"))}, "secret");
        new WebSocket(${JSON.stringify(outside.url("/socket").replace("http", "ws"))});
      </script>`,
    "/bounce-outside": (_request, response) => {
      response.writeHead(302, { location: outside.url("/pixel.png") }).end();
    },
    "/webrtc": `<title>WebRTC</title><body><script>document.body.append(typeof RTCPeerConnection)</script>`,
    "/redirect-outside": (_request, response) => {
      response.writeHead(302, { location: outside.url("/") }).end();
    },
    "/redirect-inside": (_request, response) => {
      response.writeHead(301, { location: "/" }).end();
    },
    "/missing": (_request, response) => {
      response.writeHead(404, { "content-type": "text/html" }).end("<title>Nope</title>gone");
    },
  });
});

function hostAllowingSite(): Promise<TemporaryHost> {
  // The page servers are on loopback, which pages reach only when allowPrivate lists it.
  return bed.host({ allowedHosts: [site.host], allowPrivate: ["127.0.0.1"] });
}

describe("browser.extract", () => {
  it("default-exports a defined skill with the schemas of its skill.json", () => {
    expectManifestSchemas("extract", extract);
  });

  it("returns the rendered text, title, status and absolute links of a page", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(execution.error).toBeNull();
    expect(execution.status).toBe("success");
    const output = execution.output as Record<string, unknown>;
    expect(output).toMatchObject({ url: site.url("/"), status: 200, title: "Home", truncated: false });
    expect(output.text).toContain("Welcome");
    expect(output.text).toContain("Hello reader");
    expect(output.text).toContain("added by script");
    expect(output.text).not.toContain("hidden text");
    expect(output.links).toEqual([
      { text: "About us", href: site.url("/about") },
      { text: "Contact", href: site.url("/contact") },
    ]);
  });

  it("reads only the element a selector picks", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/"),
      selector: "#menu",
    });
    const output = execution.output as { text: string; links: unknown[] };
    expect(output.text).toBe("About us Contact");
    expect(output.links).toHaveLength(2);
  });

  it("cuts text and links at their limits and says so", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/long"),
      maxTextChars: 100,
      maxLinks: 5,
    });
    const output = execution.output as { text: string; links: unknown[]; truncated: boolean };
    expect(output.text).toHaveLength(100);
    expect(output.links).toHaveLength(5);
    expect(output.truncated).toBe(true);
  });

  it("reports the final URL after an allowed redirect, and the status of an error page", async () => {
    const host = await hostAllowingSite();
    const redirected = await host.executor.execute("browser.extract", { url: site.url("/redirect-inside") });
    expect(redirected.output).toMatchObject({ url: site.url("/"), status: 200, title: "Home" });
    const missing = await host.executor.execute("browser.extract", { url: site.url("/missing") });
    expect(missing.output).toMatchObject({ status: 404, title: "Nope", text: "gone" });
  });

  it("fails with ELEMENT_NOT_FOUND when the selector matches nothing", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/"),
      selector: "#nowhere",
    });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("ELEMENT_NOT_FOUND");
    expect(execution.error?.message).toContain("#nowhere");
  });

  it("fails with INPUT_INVALID for a malformed selector", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/"),
      selector: "a[href",
    });
    expect(execution.error?.code).toBe("INPUT_INVALID");
    expect(execution.error?.message).toContain("a[href");
  });
});

describe("browser.extract host allowlist", () => {
  it("refuses every URL while no host is allowed, naming the variable to set", async () => {
    const host = await bed.host({ allowedHosts: [] });
    const before = site.requests.length;
    const execution = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("SKILLBOX_BROWSER_ALLOWED_HOSTS");
    expect(site.requests.length).toBe(before);
  });

  it("refuses a host that is not on the allowlist before opening anything", async () => {
    const host = await hostAllowingSite();
    const before = outside.requests.length;
    const execution = await host.executor.execute("browser.extract", { url: outside.url("/") });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain(outside.host);
    expect(outside.requests.length).toBe(before);
  });

  it.each([
    "file:///etc/passwd",
    "data:text/html,hi",
    "javascript:alert(1)",
    "chrome://version",
    "ftp://127.0.0.1/",
  ])("refuses the non-http URL %s", async (url) => {
    const host = await bed.host({ allowedHosts: ["*"] });
    const execution = await host.executor.execute("browser.extract", { url });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("only http and https");
  });

  it("stops the page's requests, redirects and WebSockets to hosts outside the allowlist", async () => {
    const host = await hostAllowingSite();
    const before = outside.requests.length;
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/embeds-outside"),
      waitUntil: "networkidle",
    });
    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({ text: "local text" });
    expect((execution.output as { blockedRequests: number }).blockedRequests).toBeGreaterThanOrEqual(4);
    expect(site.requests).toContain("GET /bounce-outside");
    expect(outside.requests.length).toBe(before);
  });

  it("gives pages no WebRTC, which could reach other hosts without a request", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.extract", { url: site.url("/webrtc") });
    expect(execution.output).toMatchObject({ text: "undefined" });
  });

  it("refuses a loopback page under the allowlist `*` without reaching it, unless allowPrivate lists it", async () => {
    const before = site.requests.length;
    for (const url of [site.url("/"), `http://localhost:${new URL(site.origin).port}/`]) {
      const refused = await (await bed.host({ allowedHosts: ["*"] })).executor.execute("browser.extract", {
        url,
      });
      expect(refused.error?.code, url).toBe("URL_REFUSED");
      expect(refused.error?.message, url).toContain("SKILLBOX_BROWSER_ALLOW_PRIVATE");
      expect(refused.error?.data, url).toMatchObject({ reason: "private-address" });
    }
    expect(site.requests.length).toBe(before);
    const host = await bed.host({ allowedHosts: ["*"], allowPrivate: ["127.0.0.1"] });
    const allowed = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(allowed.status).toBe("success");
    expect(site.requests.slice(before)).toContain("GET /");
  });

  it("refuses a redirect from an allowed page to a loopback address allowPrivate does not list", async () => {
    // 127.0.0.1 is allowed; the redirect goes to 127.0.0.2, another loopback address.
    const target = await bed.pageServer({ "/": "<title>Second</title>second" }, "127.0.0.2");
    const redirecting = await bed.pageServer({
      "/": (_request, response) => response.writeHead(302, { location: target.url("/") }).end(),
    });
    const host = await bed.host({ allowedHosts: ["*"], allowPrivate: ["127.0.0.1"] });
    const execution = await host.executor.execute("browser.extract", { url: redirecting.url("/") });
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.data).toMatchObject({ reason: "private-address" });
    expect(redirecting.requests).toEqual(["GET /"]);
    expect(target.requests).toEqual([]);
  });

  it("refuses a redirect to a host outside the allowlist without reaching it", async () => {
    const host = await hostAllowingSite();
    const before = outside.requests.length;
    const execution = await host.executor.execute("browser.extract", { url: site.url("/redirect-outside") });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain(outside.host);
    expect(outside.requests.length).toBe(before);
  });
});

describe("createExtractSkill", () => {
  it("fails with BROWSER_UNAVAILABLE naming the missing executable and the fix", async () => {
    const host = await bed.host({
      allowedHosts: [site.host],
      allowPrivate: ["127.0.0.1"],
      executablePath: "/nonexistent/chromium",
    });
    const execution = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("BROWSER_UNAVAILABLE");
    expect(execution.error?.message).toContain("/nonexistent/chromium");
    expect(execution.error?.message).toContain("apt-get install chromium");
    expect(execution.error?.message).toContain("SKILLBOX_BROWSER_EXECUTABLE");
  });

  it("rejects malformed settings with CONFIG_INVALID naming the setting", () => {
    expect(() => createExtractSkill({ allowedHosts: ["http://example.com/path"] })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining("allowedHosts") }),
    );
  });
});

describe("browser.extract default export", () => {
  const saved = { ...process.env };

  afterEach(() => {
    for (const name of [
      "SKILLBOX_BROWSER_ALLOWED_HOSTS",
      "SKILLBOX_BROWSER_ALLOW_PRIVATE",
      "SKILLBOX_BROWSER_EXECUTABLE",
    ]) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it("reads the allowlist from the environment at each execution", async () => {
    const host = await bed.host();
    delete process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS;
    const refused = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(refused.error?.code).toBe("URL_REFUSED");
    process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = `example.com, ${site.host}`;
    process.env.SKILLBOX_BROWSER_ALLOW_PRIVATE = "127.0.0.1";
    const allowed = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(allowed.status).toBe("success");
  });

  it("refuses loopback under SKILLBOX_BROWSER_ALLOWED_HOSTS=* until SKILLBOX_BROWSER_ALLOW_PRIVATE lists it", async () => {
    const host = await bed.host();
    process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = "*";
    delete process.env.SKILLBOX_BROWSER_ALLOW_PRIVATE;
    const before = site.requests.length;
    const refused = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(refused.error?.code).toBe("URL_REFUSED");
    expect(site.requests.length).toBe(before);
    process.env.SKILLBOX_BROWSER_ALLOW_PRIVATE = "127.0.0.0/8";
    expect((await host.executor.execute("browser.extract", { url: site.url("/") })).status).toBe("success");
    process.env.SKILLBOX_BROWSER_ALLOW_PRIVATE = "not a host";
    expect((await host.executor.execute("browser.extract", { url: site.url("/") })).error).toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("SKILLBOX_BROWSER_ALLOW_PRIVATE"),
    });
  });

  it("reports a malformed variable as CONFIG_INVALID naming it", async () => {
    const host = await bed.host();
    process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = "exa mple.com";
    const execution = await host.executor.execute("browser.extract", { url: site.url("/") });
    expect(execution.error?.code).toBe("CONFIG_INVALID");
    expect(execution.error?.message).toContain("SKILLBOX_BROWSER_ALLOWED_HOSTS");
  });
});

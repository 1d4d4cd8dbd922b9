import { expectTraceparentOf, useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useBrowserTestBed } from "./helpers/browser-test-bed.ts";
import type { PageHandler, PageServer } from "./helpers/page-server.ts";

/** A request a page server answered, with the trace header it carried. */
interface SeenRequest {
  server: "site" | "third-party";
  request: string;
  traceparent: string | string[] | undefined;
  body: string;
}

const bed = useBrowserTestBed();
let site: PageServer;
let thirdParty: PageServer;
let seen: SeenRequest[] = [];

/** A page handler answering `body` as `type` and noting the request in `seen`. */
function recording(server: SeenRequest["server"], body: string, type = "text/html"): PageHandler {
  return (request, response, requestBody) => {
    seen.push({
      server,
      request: `${request.method} ${request.url}`,
      traceparent: request.headers.traceparent,
      body: requestBody,
    });
    response.writeHead(200, { "content-type": type }).end(body);
  };
}

beforeAll(async () => {
  thirdParty = await bed.pageServer({
    "/pixel.png": recording("third-party", "x", "image/png"),
    "/frame": recording("third-party", "<title>Frame</title>framed"),
  });
  site = await bed.pageServer({
    "/": recording(
      "site",
      `<!doctype html><title>Home</title><p>home</p>
      <img src="/pixel.png"><script src="/app.js"></script>
      <img src="${thirdParty.url("/pixel.png")}"><iframe src="${thirdParty.url("/frame")}"></iframe>
      <script>fetch("/data").then((response) => response.text()).then((text) => document.body.append(text))</script>`,
    ),
    "/pixel.png": recording("site", "x", "image/png"),
    "/app.js": recording("site", "document.body.append('scripted')", "text/javascript"),
    "/data": recording("site", "fetched", "text/plain"),
    "/hop": (request, response) => {
      seen.push({ server: "site", request: "GET /hop", traceparent: request.headers.traceparent, body: "" });
      response.writeHead(302, { location: "/landed" }).end();
    },
    "/landed": recording("site", "<title>Landed</title>landed"),
    "/form": recording(
      "site",
      `<title>Form</title><form method="post" action="/submit"><input name="name" id="name"><button id="send">Send</button></form>`,
    ),
    "/submit": recording("site", "<title>Thanks</title><p id='result'>thanks</p>"),
  });
});

beforeEach(() => {
  seen = [];
});

function hostAllowingBoth(): Promise<TemporaryHost> {
  // Both servers are on loopback, which pages reach only when allowPrivate lists it.
  return bed.host({ allowedHosts: [site.host, thirdParty.host], allowPrivate: ["127.0.0.1"] });
}

const requestsOf = (server: SeenRequest["server"]) =>
  seen.filter((request) => request.server === server).map(({ request }) => request);

// First, while no SDK is installed: the file installs it once, below, and never removes it early.
describe("browser skills without an OpenTelemetry SDK", () => {
  it("send no trace headers, not even on the navigation", async () => {
    const host = await hostAllowingBoth();
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/"),
      waitUntil: "networkidle",
    });
    expect(execution.error).toBeNull();
    expect(execution.traceId).toBeNull();
    expect(requestsOf("site")).toContain("GET /");
    for (const request of seen) expect(request.traceparent, request.request).toBeUndefined();
  });
});

describe("browser skills with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("send the traceparent on the navigation only: not to sub-resources, frames or third parties", async () => {
    const host = await hostAllowingBoth();
    const execution = await host.executor.execute("browser.extract", {
      url: site.url("/"),
      waitUntil: "networkidle",
    });
    expect(execution.error).toBeNull();
    expect((execution.output as { text: string }).text).toContain("fetched");
    expect(requestsOf("site").sort()).toEqual(["GET /", "GET /app.js", "GET /data", "GET /pixel.png"]);
    expect(requestsOf("third-party").sort()).toEqual(["GET /frame", "GET /pixel.png"]);
    const navigation = seen.find(({ server, request }) => server === "site" && request === "GET /");
    const others = seen.filter((request) => request !== navigation);
    const chain = expectTraceparentOf(telemetry, execution, navigation?.traceparent);
    expect(chain).toEqual(["attempt 1", "execute_tool browser.extract"]);
    for (const request of others) expect(request.traceparent, request.request).toBeUndefined();
  });

  it("keep it on a redirect of the navigation", async () => {
    const host = await hostAllowingBoth();
    const execution = await host.executor.execute("browser.extract", { url: site.url("/hop") });
    expect(execution.output).toMatchObject({ url: site.url("/landed"), title: "Landed" });
    expect(seen.map(({ request }) => request)).toEqual(["GET /hop", "GET /landed"]);
    expectTraceparentOf(telemetry, execution, seen[0]?.traceparent);
    expect(seen[1]?.traceparent).toBe(seen[0]?.traceparent);
  });

  it("send it on a later same-origin navigation of the main frame, a form post with its body intact", async () => {
    const host = await hostAllowingBoth();
    const execution = await host.executor.execute("browser.interact", {
      url: site.url("/form"),
      steps: [
        { action: "fill", selector: "#name", value: "Ada" },
        { action: "click", selector: "#send" },
      ],
      extract: "#result",
    });
    expect(execution.error).toBeNull();
    expect(execution.output).toMatchObject({ url: site.url("/submit"), text: "thanks" });
    expect(seen.map(({ request }) => request)).toEqual(["GET /form", "POST /submit"]);
    expect(seen[1]?.body).toBe("name=Ada");
    for (const request of seen) expectTraceparentOf(telemetry, execution, request.traceparent);
  });
});

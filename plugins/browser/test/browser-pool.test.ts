import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  acquireBrowser,
  browserLaunchOptions,
  browserPoolStatus,
  closeBrowser,
} from "../lib/browser-pool.ts";
import { DEFAULT_BROWSER_EXECUTABLE } from "../lib/browser-settings.ts";
import { useBrowserTestBed } from "./helpers/browser-test-bed.ts";
import { chromiumChildren, isRunning } from "./helpers/chromium-processes.ts";
import type { PageServer } from "./helpers/page-server.ts";

/** Shows the cookies and storage the page found, then sets its own. */
const STATE_PAGE = `<!doctype html><title>State</title><p id="found"></p><script>
  document.getElementById("found").textContent =
    "cookie=[" + document.cookie + "] storage=[" + localStorage.getItem("visited") + "]";
  document.cookie = "visited=yes; max-age=3600";
  localStorage.setItem("visited", "yes");
</script>`;

const bed = useBrowserTestBed();
let site: PageServer;
/** Cookie headers the server received on /state, one entry per request. */
const cookieHeaders: (string | undefined)[] = [];
/** A promise with its resolve function (Node 20 has no `Promise.withResolvers`). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** Resolved when a request for /never arrives. */
let neverArrived = deferred();
const children: ChildProcess[] = [];

beforeAll(async () => {
  site = await bed.pageServer({
    "/state": (request, response) => {
      cookieHeaders.push(request.headers.cookie);
      response
        .writeHead(200, { "content-type": "text/html", "set-cookie": "server=1; Max-Age=3600" })
        .end(STATE_PAGE);
    },
    // Sends the head of a page and never finishes it, so `load` never fires.
    "/never": (_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.write("<!doctype html><title>Never</title><p>loading forever");
      neverArrived.resolve();
    },
  });
});

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function hostAllowingSite(): Promise<TemporaryHost> {
  // The page server is on loopback, which pages reach only when allowPrivate lists it.
  return bed.host({ allowedHosts: [site.host], allowPrivate: ["127.0.0.1"] });
}

describe("browser pool", () => {
  it("launches one Chromium lazily and reuses it across executions", async () => {
    await closeBrowser();
    expect(chromiumChildren(process.pid)).toEqual([]);
    const host = await hostAllowingSite();
    const launches = browserPoolStatus().launches;
    const first = await host.executor.execute("browser.extract", { url: site.url("/state") });
    expect(first.status).toBe("success");
    const browserPids = chromiumChildren(process.pid);
    expect(browserPids).toHaveLength(1);
    const second = await host.executor.execute("browser.extract", { url: site.url("/state") });
    expect(second.status).toBe("success");
    expect(chromiumChildren(process.pid)).toEqual(browserPids);
    expect(browserPoolStatus()).toMatchObject({ browsers: 1, openContexts: 0, launches: launches + 1 });
    expect(await acquireBrowser(DEFAULT_BROWSER_EXECUTABLE)).toBe(
      await acquireBrowser(DEFAULT_BROWSER_EXECUTABLE),
    );
  });

  it("isolates executions: cookies and storage of one are not visible to the next", async () => {
    const host = await hostAllowingSite();
    cookieHeaders.length = 0;
    for (let run = 0; run < 2; run += 1) {
      const execution = await host.executor.execute("browser.extract", {
        url: site.url("/state"),
        selector: "#found",
      });
      expect(execution.output).toMatchObject({ text: "cookie=[server=1] storage=[null]" });
    }
    expect(cookieHeaders).toEqual([undefined, undefined]);
  });

  it("closes the page when the execution times out, leaving no context open", async () => {
    const host = await hostAllowingSite();
    // Warm up, so the short timeout below is spent on the page, not on launching Chromium.
    await host.executor.execute("browser.extract", { url: site.url("/state") });
    neverArrived = deferred();
    const abandonedBefore = site.abandoned.length;
    const execution = await host.executor.execute(
      "browser.extract",
      { url: site.url("/never") },
      { timeoutMs: 6000 },
    );
    expect(execution.status).toBe("timeout");
    expect(execution.error?.code).toBe("TIMEOUT");
    await vi.waitFor(() => expect(browserPoolStatus().openContexts).toBe(0), { timeout: 10_000 });
    const browser = await acquireBrowser(DEFAULT_BROWSER_EXECUTABLE);
    expect(browser.contexts()).toHaveLength(0);
    // The browser hung up on the response it was waiting for: the page's work really stopped.
    await neverArrived.promise;
    await vi.waitFor(() => expect(site.abandoned.length).toBeGreaterThan(abandonedBefore), {
      timeout: 10_000,
    });
  });

  it("closes the page when the caller cancels", async () => {
    const host = await hostAllowingSite();
    neverArrived = deferred();
    const controller = new AbortController();
    const running = host.executor.execute(
      "browser.extract",
      { url: site.url("/never") },
      { signal: controller.signal },
    );
    await neverArrived.promise;
    controller.abort();
    const execution = await running;
    expect(execution.status).toBe("cancelled");
    await vi.waitFor(() => expect(browserPoolStatus().openContexts).toBe(0), { timeout: 10_000 });
  });

  it("launches a new Chromium when the old one died", async () => {
    const host = await hostAllowingSite();
    const warmUp = await host.executor.execute("browser.extract", { url: site.url("/state") });
    expect(warmUp.status).toBe("success");
    const [browserPid] = chromiumChildren(process.pid);
    expect(browserPid).toBeDefined();
    const launches = browserPoolStatus().launches;
    process.kill(browserPid as number, "SIGKILL");
    await vi.waitFor(() => expect(browserPoolStatus().browsers).toBe(0), { timeout: 10_000 });
    const execution = await host.executor.execute("browser.extract", { url: site.url("/state") });
    expect(execution.status).toBe("success");
    expect(browserPoolStatus().launches).toBe(launches + 1);
    expect(chromiumChildren(process.pid)).not.toContain(browserPid);
  });
});

describe("browserLaunchOptions", () => {
  const fixture = fileURLToPath(new URL("./fixtures/launch-and-wait.mjs", import.meta.url));

  /** Starts a node process that launches Chromium with the pool's options; resolves with both pids. */
  async function launchInChild(): Promise<{ child: ChildProcess; browserPid: number }> {
    const child = spawn(process.execPath, [fixture], {
      env: {
        ...process.env,
        LAUNCH_OPTIONS: JSON.stringify(browserLaunchOptions(DEFAULT_BROWSER_EXECUTABLE)),
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(child);
    const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
    expect(chunk.toString()).toBe("ready\n");
    const [browserPid] = chromiumChildren(child.pid as number);
    expect(browserPid).toBeDefined();
    return { child, browserPid: browserPid as number };
  }

  it("lets Chromium end with a host that exits normally", async () => {
    const { child, browserPid } = await launchInChild();
    child.stdin?.write("exit\n");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    await vi.waitFor(() => expect(isRunning(browserPid)).toBe(false), { timeout: 10_000 });
  });

  it("does not swallow SIGTERM, and Chromium ends with the host", async () => {
    const { child, browserPid } = await launchInChild();
    child.kill("SIGTERM");
    const [code, signal] = await once(child, "exit");
    expect({ code, signal }).toEqual({ code: null, signal: "SIGTERM" });
    await vi.waitFor(() => expect(isRunning(browserPid)).toBe(false), { timeout: 10_000 });
  });
});

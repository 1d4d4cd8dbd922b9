import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { browserPoolStatus, closeBrowser } from "../lib/browser-pool.ts";
import { useBrowserTestBed } from "./helpers/browser-test-bed.ts";
import { chromiumChildren, isRunning } from "./helpers/chromium-processes.ts";
import type { PageServer } from "./helpers/page-server.ts";

const bed = useBrowserTestBed();
let site: PageServer;

beforeAll(async () => {
  site = await bed.pageServer({ "/": "<!doctype html><title>Lifecycle</title><p>hello" });
});

function hostAllowingSite(): Promise<TemporaryHost> {
  // The page server is on loopback, which pages reach only when allowPrivate lists it.
  return bed.host({ allowedHosts: [site.host], allowPrivate: ["127.0.0.1"] });
}

async function extract(host: TemporaryHost): Promise<void> {
  const execution = await host.executor.execute("browser.extract", { url: site.url("/") });
  expect(execution.status).toBe("success");
}

describe("browser pool lifecycle", () => {
  it("closes Chromium when the last host that used it closes, and not before", async () => {
    await closeBrowser();
    const first = await hostAllowingSite();
    const second = await hostAllowingSite();
    await extract(first);
    await extract(first);
    await extract(second);
    const browsers = chromiumChildren(process.pid);
    expect(browsers).toHaveLength(1);
    expect(browserPoolStatus()).toMatchObject({ browsers: 1, hosts: 2 });

    await first.close();
    // The other host still uses the browser: it stays, and serves that host's next execution.
    expect(browserPoolStatus()).toMatchObject({ browsers: 1, hosts: 1 });
    await extract(second);
    expect(chromiumChildren(process.pid)).toEqual(browsers);

    await second.close();
    expect(browserPoolStatus()).toMatchObject({ browsers: 0, hosts: 0 });
    await vi.waitFor(() => expect(browsers.filter(isRunning)).toEqual([]), { timeout: 10_000 });
  });

  it("launches again for a new host after the last one closed", async () => {
    const before = await hostAllowingSite();
    await extract(before);
    await before.close();
    expect(browserPoolStatus().browsers).toBe(0);
    const after = await hostAllowingSite();
    const launches = browserPoolStatus().launches;
    await extract(after);
    expect(browserPoolStatus()).toMatchObject({ browsers: 1, hosts: 1, launches: launches + 1 });
  });
});

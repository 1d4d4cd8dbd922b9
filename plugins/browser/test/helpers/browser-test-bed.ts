import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterAll, afterEach } from "vitest";
import { closeBrowser } from "../../lib/browser-pool.ts";
import type { BrowserSettingsInput } from "../../lib/browser-settings.ts";
import { createBrowserTestHost } from "./browser-test-host.ts";
import { type PageHandler, type PageServer, startPageServer } from "./page-server.ts";

/** The page servers and hosts of one test file, each stopped when the file no longer needs it. */
export interface BrowserTestBed {
  /** Starts a page server (usually in `beforeAll`) on a loopback `address`, closed after the file's last test. */
  pageServer(pages: Record<string, string | PageHandler>, address?: string): Promise<PageServer>;
  /**
   * A host with the browser skills built from `settings` (the default exports, reading the
   * environment, when omitted), disposed after the test.
   */
  host(settings?: BrowserSettingsInput): Promise<TemporaryHost>;
}

/**
 * Creates a test file's {@link BrowserTestBed} and registers its hooks: hosts are disposed after
 * each test; after the last one the shared Chromium is closed, so no browser outlives the file,
 * and then the page servers. Call it at the top level of the file.
 */
export function useBrowserTestBed(): BrowserTestBed {
  const hosts: TemporaryHost[] = [];
  const servers: PageServer[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.dispose();
  });
  afterAll(async () => {
    await closeBrowser();
    for (const server of servers.splice(0)) await server.close();
  });
  return {
    async pageServer(pages, address) {
      const server = await startPageServer(pages, address);
      servers.push(server);
      return server;
    },
    async host(settings) {
      const host = await createBrowserTestHost(settings);
      hosts.push(host);
      return host;
    },
  };
}

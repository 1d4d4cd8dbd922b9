import type { SkillLogger } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { githubEtagCache } from "../../lib/etag-cache.ts";
import type { GithubSettingsOptions } from "../../lib/github-settings.ts";
import { type FakeGithub, startFakeGithub } from "./fake-github.ts";
import { createGithubHost } from "./github-host.ts";

/** Fake servers and hosts a test file starts, all stopped by `cleanup()` (call it in `afterEach`). */
export interface TestBed {
  server(options?: { basePath?: string }): Promise<FakeGithub>;
  host(settings: GithubSettingsOptions, options?: { logger?: SkillLogger }): TemporaryHost;
  cleanup(): Promise<void>;
}

/** Creates a {@link TestBed}. `cleanup()` also empties the shared ETag cache, so tests stay independent. */
export function createTestBed(): TestBed {
  const hosts: TemporaryHost[] = [];
  const servers: FakeGithub[] = [];
  return {
    async server(options) {
      const fake = await startFakeGithub(options);
      servers.push(fake);
      return fake;
    },
    host(settings, options) {
      const host = createGithubHost(settings, options);
      hosts.push(host);
      return host;
    },
    async cleanup() {
      for (const host of hosts.splice(0)) await host.dispose();
      for (const server of servers.splice(0)) await server.close();
      githubEtagCache().clear();
    },
  };
}

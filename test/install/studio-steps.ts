import { describe, expect, it } from "vitest";
import { describeResult } from "./child-processes.js";
import type { InstalledProject } from "./installed-project.js";
import { interceptorFixture } from "./skill-fixtures.js";

/**
 * Skillbox Studio from the installed tarballs: the page comes from @skillbox/studio's dist/app,
 * found through @skillbox/server's dependency, so a tarball without the build (or a layout that
 * hides the package from the server) shows here as a 503 or a missing asset.
 */
export function describeStudioSteps(installed: () => InstalledProject): void {
  describe("Skillbox Studio", () => {
    it("skillbox serve answers GET / with the Studio's index.html, and its first asset with 200", async () => {
      const project = installed();
      project.write(interceptorFixture("studio-demo/plugins"));
      const server = project.startCli(["serve", "--port", "0"], { cwd: "studio-demo" });
      try {
        const [, studioUrl = ""] = await server.waitForOutput(/Studio: (http:\/\/127\.0\.0\.1:\d+\/)/);
        const page = await fetch(studioUrl);
        const html = await page.text();
        const context = `${page.status} ${html}\nserve stdout:\n${server.stdout()}\nserve stderr:\n${server.stderr()}`;
        expect(page.status, context).toBe(200);
        expect(page.headers.get("content-type"), context).toBe("text/html; charset=utf-8");
        expect(html, context).toContain("<title>Skillbox Studio</title>");
        const first = /(?:src|href)="\.\/(assets\/[^"]+)"/.exec(html)?.[1];
        expect(first, context).toBeDefined();
        const asset = await fetch(new URL(first ?? "", studioUrl));
        expect(asset.status, `${first}: ${asset.status}`).toBe(200);
        expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0);
      } finally {
        await server.stop("SIGTERM");
      }
      const stopped = await server.finished();
      expect(stopped.code, describeResult(stopped)).toBe(0);
    });
  });
}

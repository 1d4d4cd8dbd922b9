import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reloadWithLaggedBurst, startLaggedBurstStream } from "./executions/lagged-burst-stream.js";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

let host: StudioHost;
let browser: Browser;
let page: Page;

/** An interceptor plugin folder: a manifest and a module whose default export is the hooks object. */
function interceptorFolder(manifest: Record<string, unknown>, hooks = "before() { return undefined; }") {
  return {
    "interceptor.json": { version: "1.0.0", handler: "./index.ts", ...manifest },
    "index.ts": `export default { ${hooks} };\n`,
  };
}

beforeAll(async () => {
  [host, browser] = await Promise.all([
    startStudioHost({
      plugins: {
        echo: skillFolder({ name: "echo", input: { type: "object" } }, "return input;"),
        audit: interceptorFolder({ name: "audit", order: 10 }, "after() { return undefined; }"),
        gate: interceptorFolder({ name: "gate", order: -5, match: { tags: ["guarded"] } }),
      },
    }),
    launchBrowser(),
  ]);
  page = await openStudio(browser, host.url, { route: "#/system" });
}, 60_000);

afterAll(async () => {
  await page?.context().close();
  await Promise.all([browser?.close(), host?.stop()]);
});

const interceptorRows = () => page.getByRole("table", { name: "Interceptors" }).locator("tbody tr");

describe("the Interceptors & sandboxes page", { timeout: 60_000 }, () => {
  it("lists the active interceptors in the order they run, with hooks, scope and source", async () => {
    await page.getByRole("heading", { level: 1, name: "Interceptors & sandboxes" }).waitFor();
    await interceptorRows().first().waitFor();
    const names = () =>
      interceptorRows().evaluateAll((rows) => rows.map((row) => row.getAttribute("data-interceptor")));
    await eventually(names).toEqual(["gate", "audit"]);
    const gate = (await page.locator("tr[data-interceptor=gate]").textContent()) ?? "";
    expect(gate).toContain("-5");
    expect(gate).toContain("before");
    expect(gate).toContain("tags guarded");
    expect(gate).toContain("package");
    await eventually(() => page.locator("tr[data-interceptor=audit]").textContent()).toContain("after");
    assertNoPageErrors(page);
  });

  it("shows an interceptor added while it is open, and a broken one with its load error", async () => {
    host.project.tree.writeFolder("plugins/early", interceptorFolder({ name: "early", order: -50 }));
    await page.locator("tr[data-interceptor=early]").waitFor();
    await eventually(() => interceptorRows().first().getAttribute("data-interceptor")).toBe("early");

    host.project.tree.write("plugins/early/index.ts", "export default { before( {\n");
    const failure = page.locator("tr[data-interceptor=early] [data-load-error]");
    await failure.waitFor();
    await eventually(() => failure.textContent()).toContain("plugins/early/index.ts");
    assertNoPageErrors(page);
  });

  it("shows each sandbox runtime with its details and pools as tables", async () => {
    const sandboxes = page.getByRole("region", { name: "Sandboxes" });
    await sandboxes.locator("[data-runtime]").first().waitFor();
    const answer = (await (await fetch(`${host.url}/api/sandbox`)).json()) as {
      runtimes: Array<{ name: string; details: Record<string, unknown>; pools: unknown[] }>;
    };
    const runtimes = () =>
      sandboxes
        .locator("[data-runtime]")
        .evaluateAll((sections) => sections.map((section) => section.getAttribute("data-runtime")));
    await eventually(runtimes).toEqual(answer.runtimes.map((runtime) => runtime.name));
    expect(answer.runtimes.map((runtime) => runtime.name)).toContain("worker");
    const worker = sandboxes.locator("[data-runtime=worker]");
    const details = worker.getByRole("table", { name: "Details of worker" });
    await eventually(() => details.locator("tr").count()).toBe(
      Object.keys(answer.runtimes.find((runtime) => runtime.name === "worker")!.details).length,
    );
    await eventually(() => details.textContent()).toContain("worker thread");
    for (const runtime of answer.runtimes) {
      const section = sandboxes.locator(`[data-runtime="${runtime.name}"]`);
      if (runtime.pools.length === 0) {
        await eventually(() => section.textContent()).toContain("No pools");
      } else {
        await eventually(() =>
          section
            .getByRole("table", { name: `Pools of ${runtime.name}` })
            .locator("tbody tr")
            .count(),
        ).toBe(runtime.pools.length);
      }
    }
    assertNoPageErrors(page);
  });

  it("reads the sandboxes again once for a burst of lagged notices, not once per notice", async () => {
    const stream = await startLaggedBurstStream({ notices: 30 });
    const own = await openStudio(browser, host.url, { route: "#/system" });
    try {
      await own.getByRole("region", { name: "Sandboxes" }).locator("[data-runtime]").first().waitFor();
      const reads: string[] = [];
      own.on("request", (request) => {
        if (new URL(request.url()).pathname === "/api/sandbox") reads.push(request.url());
      });
      await reloadWithLaggedBurst(own, stream);
      // The first read, at most a few coalesced ones (and the 5 s refresh), not one per notice.
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.length).toBeLessThan(10);
      assertNoPageErrors(own);
    } finally {
      await own.context().close();
      await stream.close();
    }
  });
});

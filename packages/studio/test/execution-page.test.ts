// The Execution page against a real `skillbox dev` in Debian's Chromium: bodies, errors,
// attempts, `ctx.call` children, live progress and cancelling a running execution.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readExecution, runSkill } from "./executions/execution-requests.js";
import { reloadWithLaggedBurst, startLaggedBurstStream } from "./executions/lagged-burst-stream.js";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

let host: StudioHost;
let browser: Browser;

beforeAll(async () => {
  [host, browser] = await Promise.all([
    startStudioHost({
      plugins: {
        echo: skillFolder({ name: "echo", input: { type: "object" } }, "return { echoed: input };"),
        fails: skillFolder(
          { name: "fails", input: { type: "object" } },
          'throw new Error("the sky fell on " + input.city);',
        ),
        parent: skillFolder(
          { name: "parent", input: { type: "object" }, requires: { echo: "^1.0.0" } },
          'const child = await ctx.call("echo", { from: "parent" }); return { child };',
        ),
        // Reports a step every 100 ms until it is cancelled (it awaits its signal, as a handler should).
        slow: skillFolder(
          { name: "slow", input: { type: "object" } },
          `let step = 0;
  while (!ctx.signal.aborted) {
    step += 1;
    await ctx.progress({ progress: step, total: 1000, message: "step " + step });
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 100);
      ctx.signal.addEventListener("abort", () => { clearTimeout(timer); resolve(undefined); }, { once: true });
    });
  }
  return { stoppedAt: step };`,
        ),
      },
    }),
    launchBrowser(),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([browser?.close(), host?.stop()]);
});

async function openExecution(id: string): Promise<Page> {
  const page = await openStudio(browser, host.url, { route: `#/executions/${id}` });
  await page.getByRole("heading", { level: 1, name: /^Execution of / }).waitFor();
  return page;
}

describe("the Execution page", { timeout: 90_000 }, () => {
  it("shows a succeeded execution's input, output, attempts and timings, and that it was not traced", async () => {
    const { execution } = await runSkill(host, "echo", { input: { city: "Lyon" }, sessionId: "trip-1" });
    const page = await openExecution(execution.id);
    await expect(page.locator("section.execution-page").getAttribute("data-status")).resolves.toBe("success");
    const input = page.getByRole("region", { name: "Input", exact: true });
    await expect(input.textContent()).resolves.toContain('"city": "Lyon"');
    const output = page.getByRole("region", { name: "Output", exact: true });
    await expect(output.textContent()).resolves.toContain('"echoed"');
    await expect(page.locator("dd[data-attempts]").textContent()).resolves.toBe("1");
    await expect(page.locator("[data-trace-id]").textContent()).resolves.toBe("not traced");
    await expect(page.getByRole("main").textContent()).resolves.toContain("trip-1");
    // Nothing is left to do with a finished execution.
    for (const name of ["Cancel", "Approve", "Reject"]) {
      await eventually(() => page.getByRole("button", { name, exact: true }).count()).toBe(0);
    }
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("shows a failed execution's error code and message", async () => {
    const { execution } = await runSkill(host, "fails", { input: { city: "Nantes" } });
    expect(execution.status).toBe("error");
    const page = await openExecution(execution.id);
    const error = page.getByRole("region", { name: "Error" });
    await expect(error.locator("[data-error-code]").textContent()).resolves.toBe(execution.error!.code);
    await expect(error.locator("[data-error-message]").textContent()).resolves.toContain(
      "the sky fell on Nantes",
    );
    await expect(page.getByRole("main").textContent()).resolves.toContain("No output");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("lists the executions a skill made with ctx.call, each linking back to its parent", async () => {
    const { execution } = await runSkill(host, "parent");
    expect(execution.status).toBe("success");
    const page = await openExecution(execution.id);
    const children = page.getByRole("table", { name: "Child executions" });
    const childRow = children.locator("tr[data-execution-id]");
    await childRow.waitFor();
    await eventually(() => childRow.count()).toBe(1);
    await eventually(() => childRow.textContent()).toContain("echo@1.0.0");

    await childRow.getByRole("link").first().click();
    await page.getByRole("heading", { level: 1, name: /^Execution of echo/ }).waitFor();
    await eventually(() => page.getByRole("region", { name: "Input", exact: true }).textContent()).toContain(
      '"from": "parent"',
    );
    await page.locator("[data-parent-execution]").click();
    await page.getByRole("heading", { level: 1, name: /^Execution of parent/ }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/executions/${execution.id}`);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("follows a running execution's progress live and cancels it", async () => {
    const { status, execution } = await runSkill(host, "slow", { respondAsync: true });
    expect(status).toBe(202);
    const page = await openExecution(execution.id);
    await page.locator("[data-live=live]").waitFor();
    const progress = page.locator("[data-progress-text]");
    await progress.waitFor();
    const first = await progress.textContent();
    expect(first).toMatch(/^\d+ of 1000 \(\d+ %\) — step \d+$/);
    // The page moves on by itself. The stream's `ready` makes it read the record once more, which
    // may change the text once; a second change can only come from the live progress events.
    const nextStep = (seen: string | null) =>
      page.waitForFunction((previous) => {
        const text = document.querySelector("[data-progress-text]")?.textContent ?? "";
        return text !== previous && /— step \d+$/.test(text) ? text : false;
      }, seen);
    const second = await (await nextStep(first)).jsonValue();
    await nextStep(String(second));
    await expect(page.locator("progress").getAttribute("max")).resolves.toBe("1000");

    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    await page.locator('section.execution-page[data-status="cancelled"]').waitFor();
    await eventually(() => page.getByRole("button", { name: "Cancel", exact: true }).count()).toBe(0);
    const stored = await readExecution(host, execution.id);
    expect(stored.status).toBe("cancelled");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("reads the execution again once for a burst of lagged notices, not once per notice", async () => {
    const { execution } = await runSkill(host, "echo", { input: { burst: true } });
    const stream = await startLaggedBurstStream({ notices: 30 });
    try {
      const page = await openExecution(execution.id);
      await page.locator("[data-live=live]").waitFor();
      const reads: string[] = [];
      page.on("request", (request) => {
        if (new URL(request.url()).pathname === `/api/executions/${execution.id}`) reads.push(request.url());
      });
      await reloadWithLaggedBurst(page, stream);
      // The first read and at most a few coalesced ones, not one per notice.
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.length).toBeLessThan(10);
      assertNoPageErrors(page);
      await page.context().close();
    } finally {
      await stream.close();
    }
  });

  it("shows the server's refusal of a cancel when the execution ended meanwhile", async () => {
    const { execution } = await runSkill(host, "slow", { respondAsync: true });
    const page = await openExecution(execution.id);
    await page.getByRole("button", { name: "Cancel", exact: true }).waitFor();
    // Without the live stream (as if it dropped), the page cannot hear that the execution ended elsewhere.
    await page.route("**/api/events*", (route) => route.abort());
    await page.reload();
    await page.getByRole("button", { name: "Cancel", exact: true }).waitFor();
    const cancelled = await fetch(`${host.url}/api/executions/${execution.id}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(cancelled.status).toBe(200);

    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toContain("EXECUTION_FINISHED");
    // The refusal made the page read the execution again: it shows how it really ended.
    await page.locator('section.execution-page[data-status="cancelled"]').waitFor();
    await eventually(() => page.getByRole("button", { name: "Cancel", exact: true }).count()).toBe(0);
    assertNoPageErrors(page);
    await page.context().close();
  });
});

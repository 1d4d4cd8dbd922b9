import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

let host: StudioHost;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [host, browser] = await Promise.all([
    startStudioHost({
      plugins: {
        echo: skillFolder({ name: "echo", input: { type: "object" } }, "return input;"),
        fail: skillFolder({ name: "fail", input: { type: "object" } }, 'throw new Error("always fails");'),
      },
    }),
    launchBrowser(),
  ]);
}, 60_000);

afterAll(async () => {
  await page?.context().close();
  await Promise.all([browser?.close(), host?.stop()]);
});

/** Runs a skill over the HTTP API (as any client would) and returns the status it ended with. */
async function execute(skill: string): Promise<string> {
  const response = await fetch(`${host.url}/api/skills/${skill}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: {} }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { status: string }).status;
}

/** Waits until the text of `selector` on the page is `expected` (the charts update live). */
async function waitForText(selector: string, expected: string): Promise<void> {
  await page
    .locator(selector, { hasText: new RegExp(`^\\s*${expected}\\s*$`) })
    .waitFor({ state: "attached" });
}

/**
 * How many of the listeners each uPlot chart adds to the window until it is destroyed (its
 * `dppxchange` one) the page has, read through the Chrome DevTools Protocol.
 */
async function windowListeners(target: Page): Promise<number> {
  const session = await target.context().newCDPSession(target);
  try {
    const { result } = (await session.send("Runtime.evaluate", { expression: "window" })) as {
      result: { objectId: string };
    };
    const { listeners } = (await session.send("DOMDebugger.getEventListeners", {
      objectId: result.objectId,
    })) as { listeners: Array<{ type: string }> };
    return listeners.filter((listener) => listener.type === "dppxchange").length;
  } finally {
    await session.detach();
  }
}

const TIMELINE = "figure[data-figure=executions-per-minute]";
const DURATIONS = "figure[data-figure=duration-by-skill]";

describe("the Charts page", { timeout: 60_000 }, () => {
  it("charts the executions per minute by status, with the same numbers as a table", async () => {
    for (let index = 0; index < 3; index += 1) await expect(execute("echo")).resolves.toBe("success");
    for (let index = 0; index < 2; index += 1) await expect(execute("fail")).resolves.toBe("error");
    page = await openStudio(browser, host.url, { route: "#/charts" });
    await page.getByRole("heading", { level: 1, name: "Charts" }).waitFor();
    const timeline = page.getByRole("figure", { name: "Executions per minute" });
    await timeline.locator("canvas").first().waitFor();
    // The legend names the statuses.
    const legend = () => timeline.locator(".u-legend").textContent();
    await eventually(legend).toContain("success");
    await eventually(legend).toContain("error");
    const totals = `${TIMELINE} tfoot tr[data-bucket=total]`;
    await eventually(() => page.locator(`${totals} td[data-status=success]`).textContent()).toBe("3");
    await eventually(() => page.locator(`${totals} td[data-status=error]`).textContent()).toBe("2");
    // The table sits in a closed <details>; opening it shows the same numbers.
    await timeline.getByText("The numbers of this chart").click();
    await timeline.getByRole("table", { name: "Executions per minute, as numbers" }).waitFor();
    await eventually(() => timeline.locator(".chart-summary").textContent()).toContain(
      "5 executions in the last hour: 3 success, 2 error",
    );
    assertNoPageErrors(page);
  });

  it("updates live when executions finish", async () => {
    await expect(execute("echo")).resolves.toBe("success");
    await waitForText(`${TIMELINE} tfoot tr[data-bucket=total] td[data-status=success]`, "4");
    await waitForText(`${DURATIONS} tr[data-skill=echo] td:nth-of-type(1)`, "4");
    assertNoPageErrors(page);
  });

  it("shows each skill's duration distribution with p50 and p95 in words", async () => {
    const durations = page.getByRole("figure", { name: "Duration by skill" });
    await durations.locator("canvas").first().waitFor();
    await durations.getByLabel("Skill", { exact: true }).selectOption("fail");
    // The figure re-renders for the skill picked, and its table shows once the <details> opened.
    await eventually(() => durations.locator(".chart-summary").textContent()).toMatch(
      /^fail: p50 .+, p95 .+ over 2 finished executions/,
    );
    await durations.getByText("The numbers of this chart").click();
    const bucketsTotal = async () => {
      const buckets = await durations
        .getByRole("table", { name: "Durations of fail, as numbers" })
        .locator("tbody td")
        .allTextContents();
      return buckets.map(Number).reduce((sum, count) => sum + count, 0);
    };
    await eventually(bucketsTotal).toBe(2);
    await eventually(() =>
      durations.getByRole("table", { name: "Durations of every skill" }).locator("tbody tr").count(),
    ).toBe(2);
    assertNoPageErrors(page);
  });

  it("keeps the range in the address and reads it again", async () => {
    await page.getByLabel("Range").selectOption("15m");
    await page.waitForFunction(() => location.hash === "#/charts?range=15m");
    await page
      .getByRole("figure", { name: "Executions per minute" })
      .locator(".chart-summary", { hasText: "in the last 15 minutes" })
      .waitFor();
    assertNoPageErrors(page);
  });

  it("resizes its charts with the window and removes them when the page is left", async () => {
    const canvas = page.getByRole("figure", { name: "Executions per minute" }).locator("canvas").first();
    const before = await canvas.evaluate((element) => element.getBoundingClientRect().width);
    await page.setViewportSize({ width: 700, height: 800 });
    // A function, not a string: the page's CSP forbids the eval a string predicate needs.
    await page.waitForFunction(
      ({ selector, width }) =>
        (document.querySelector(selector)?.getBoundingClientRect().width ?? Infinity) < width,
      { selector: `${TIMELINE} canvas`, width: before - 100 },
    );
    await page.getByRole("link", { name: "Activity", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
    await eventually(() => page.locator(".uplot").count()).toBe(0);
    // A chart listens on the window until destroyed: coming back and leaving again must leave
    // exactly as many listeners as before.
    const away = await windowListeners(page);
    await page.getByRole("link", { name: "Charts", exact: true }).click();
    await page.locator(`${DURATIONS} canvas`).waitFor();
    await page.locator(`${TIMELINE} canvas`).waitFor();
    await eventually(() => windowListeners(page)).toBe(away + 2);
    await page.getByRole("link", { name: "Activity", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
    await eventually(() => windowListeners(page)).toBe(away);
    await eventually(() => page.locator("canvas").count()).toBe(0);
    assertNoPageErrors(page);
  });
});

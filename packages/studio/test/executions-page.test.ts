// The Executions table against a real `skillbox dev` in Debian's Chromium: live rows, filters in
// the URL, server-side pages. Executions are made over the HTTP API while the page is open.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSkill } from "./executions/execution-requests.js";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

let host: StudioHost;
let browser: Browser;

beforeAll(async () => {
  [host, browser] = await Promise.all([
    startStudioHost({
      plugins: {
        echo: skillFolder({ name: "echo", input: { type: "object" } }, "return input;"),
        fails: skillFolder(
          { name: "fails", input: { type: "object" } },
          'throw new Error("the sky fell on " + JSON.stringify(input));',
        ),
      },
    }),
    launchBrowser(),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([browser?.close(), host?.stop()]);
});

/** Opens the executions table at `query` and waits until it shows a listing. */
async function openExecutions(query = ""): Promise<Page> {
  const page = await openStudio(browser, host.url, { route: `#/executions${query}` });
  await page.getByRole("heading", { level: 1, name: "Executions" }).waitFor();
  await page.getByRole("table", { name: "Executions" }).waitFor();
  await page.getByText(/Showing \d+–\d+ of \d+/).waitFor();
  return page;
}

/** Waits until the table has rows and every one has `status` (when given) and runs `skill` (when given). */
async function waitForRows(page: Page, expected: { status?: string; skill?: string }): Promise<void> {
  await page.waitForFunction(({ status, skill }) => {
    const rows = Array.from(document.querySelectorAll("tr[data-execution-id]"));
    return (
      rows.length > 0 &&
      rows.every(
        (row) =>
          (status === undefined || row.getAttribute("data-status") === status) &&
          (skill === undefined || (row.textContent ?? "").includes(`${skill}@1.0.0`)),
      )
    );
  }, expected);
}

describe("the Executions page", { timeout: 90_000 }, () => {
  it("shows an execution made over the API as a new row, without reloading, linked to its page", async () => {
    const page = await openExecutions();
    await page.locator("[data-live=live]").waitFor();
    await page.evaluate(() => {
      (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
    });

    // The stream's `ready` makes the page list once more: the first row might come with that
    // listing; the second comes after it, so only the live events can bring it.
    const first = (await runSkill(host, "echo", { input: { note: "first row" } })).execution;
    await page.locator(`tr[data-execution-id="${first.id}"]`).waitFor();
    const { execution } = await runSkill(host, "echo", { input: { note: "fresh row" } });
    const row = page.locator(`tr[data-execution-id="${execution.id}"]`);
    await row.waitFor();
    // The row may come with the execution's start and turn to success with its end.
    await eventually(() => row.getAttribute("data-status")).toBe("success");
    await eventually(() => row.textContent()).toContain("fresh row");
    await eventually(() => row.textContent()).toContain("echo@1.0.0");
    await expect(row.locator(`a[href="#/executions/${execution.id}"]`).count()).resolves.toBe(1);
    await expect(
      page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded),
    ).resolves.toBe(true);

    await row.getByRole("link").first().click();
    await page.getByRole("heading", { level: 1, name: /^Execution/ }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/executions/${execution.id}`);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("catches up while executions keep coming, even when each listing is slower than the events", async () => {
    const page = await openExecutions();
    await page.locator("[data-live=live]").waitFor();
    const shownTotal = async () =>
      Number(/of (\d+)/.exec((await page.getByText(/Showing \d+–\d+ of \d+/).textContent()) ?? "")?.[1]);
    const before = await shownTotal();
    // From now on every listing answers 1.5 s late: slower than the table re-lists (at most
    // every 400 ms) under the steady stream of events below.
    await page.route(/\/api\/executions(\?|$)/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue().catch(() => undefined);
    });

    // A reload that cancelled the listing under way would never let one finish while events
    // keep coming: the total would stay as it was until they stopped.
    let caughtUp = false;
    for (const deadline = Date.now() + 20_000; !caughtUp && Date.now() < deadline; ) {
      await runSkill(host, "echo", { input: { note: "steady stream" } });
      caughtUp = (await shownTotal()) > before;
    }

    expect(caughtUp).toBe(true);
    await page.unrouteAll({ behavior: "ignoreErrors" });
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("filters by status and skill, keeping the filters in the URL", async () => {
    const failed = (await runSkill(host, "fails", { input: { n: 1 } })).execution;
    const succeeded = (await runSkill(host, "echo", { input: { n: 2 } })).execution;
    expect(failed.status).toBe("error");

    const page = await openExecutions();
    await page.locator(`tr[data-execution-id="${succeeded.id}"]`).waitFor();
    await page.getByLabel("Status").selectOption(["error"]);
    await page.waitForURL((url) => url.hash === "#/executions?status=error");
    await page.locator(`tr[data-execution-id="${failed.id}"]`).waitFor();
    await waitForRows(page, { status: "error" });
    await expect(page.locator(`tr[data-execution-id="${succeeded.id}"]`).count()).resolves.toBe(0);
    await eventually(() => page.locator(`tr[data-execution-id="${failed.id}"]`).textContent()).toContain(
      "HANDLER_ERROR",
    );

    // A status filter keeps out a new execution that does not match it, and lets in one that does.
    const another = (await runSkill(host, "fails", { input: { n: 3 } })).execution;
    await page.locator(`tr[data-execution-id="${another.id}"]`).waitFor();
    const hidden = (await runSkill(host, "echo", { input: { n: 4 } })).execution;
    const afterHidden = (await runSkill(host, "fails", { input: { n: 5 } })).execution;
    await page.locator(`tr[data-execution-id="${afterHidden.id}"]`).waitFor();
    await expect(page.locator(`tr[data-execution-id="${hidden.id}"]`).count()).resolves.toBe(0);

    await page.getByLabel("Status").selectOption([]);
    await page.getByLabel("Skill").fill("echo");
    await page.waitForURL((url) => url.hash === "#/executions?skill=echo");
    await page.locator(`tr[data-execution-id="${hidden.id}"]`).waitFor();
    await waitForRows(page, { skill: "echo" });
    await expect(page.locator(`tr[data-execution-id="${failed.id}"]`).count()).resolves.toBe(0);

    // The filtered view is a link: opened afresh, it shows the same rows and the same filters.
    const linked = await openExecutions("?skill=fails&status=error");
    await linked.locator(`tr[data-execution-id="${afterHidden.id}"]`).waitFor();
    await waitForRows(linked, { status: "error", skill: "fails" });
    await expect(linked.getByLabel("Skill").inputValue()).resolves.toBe("fails");
    const status = linked.getByLabel("Status");
    await expect(
      status
        .locator("option:checked")
        .evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value)),
    ).resolves.toEqual(["error"]);

    assertNoPageErrors(page);
    assertNoPageErrors(linked);
    await Promise.all([page.context().close(), linked.context().close()]);
  });

  it("filters by a time range typed as local date and time, kept in the URL as ISO instants", async () => {
    const recent = (await runSkill(host, "echo", { input: { n: "range" } })).execution;
    const page = await openExecutions();
    await page.locator(`tr[data-execution-id="${recent.id}"]`).waitFor();

    await page.getByLabel("To").fill("2000-01-01T00:00");
    await page.waitForURL((url) => new URLSearchParams(url.hash.split("?")[1]).get("to") !== null);
    const to = new URLSearchParams(new URL(page.url()).hash.split("?")[1]).get("to");
    expect(to).toBe(new Date(2000, 0, 1, 0, 0).toISOString());
    await page.getByText("No execution matches these filters.").waitFor();
    await page.getByText("Showing 0–0 of 0").waitFor();

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL((url) => url.hash === "#/executions");
    await page.locator(`tr[data-execution-id="${recent.id}"]`).waitFor();
    await page.getByLabel("From").fill("2000-01-01T00:00");
    await page.waitForURL((url) => url.hash.includes("from="));
    await page.locator(`tr[data-execution-id="${recent.id}"]`).waitFor();
    await eventually(() => page.getByLabel("From").inputValue()).toBe("2000-01-01T00:00");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("pages through 120 executions on the server, 50 rows a request", async () => {
    const ids: string[] = [];
    for (let batch = 0; batch < 12; batch += 1) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          runSkill(host, "echo", { input: { index: batch * 10 + index }, sessionId: "bulk" }),
        ),
      );
      ids.push(...answers.map((answer) => answer.execution.id));
    }

    const page = await openStudio(browser, host.url, { route: "#/executions?session=bulk" });
    const listings: URL[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/api/executions") listings.push(url);
    });
    await page.getByText("Showing 1–50 of 120").waitFor();
    await eventually(() => page.locator("tr[data-execution-id]").count()).toBe(50);
    await eventually(() => page.getByLabel("Session").inputValue()).toBe("bulk");

    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText("Showing 51–100 of 120").waitFor();
    expect(new URL(page.url()).hash).toBe("#/executions?session=bulk&offset=50");
    await eventually(() => page.locator("tr[data-execution-id]").count()).toBe(50);

    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText("Showing 101–120 of 120").waitFor();
    await eventually(() => page.locator("tr[data-execution-id]").count()).toBe(20);
    await eventually(() => page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    // Newest first: the last page holds the first executions made.
    await page.locator(`tr[data-execution-id="${ids[0]}"]`).waitFor();

    await page.getByRole("button", { name: "Previous page" }).click();
    await page.getByText("Showing 51–100 of 120").waitFor();

    // Every listing asked for one page, never for everything.
    expect(listings.length).toBeGreaterThan(0);
    for (const url of listings) {
      expect(url.searchParams.get("limit")).toBe("50");
      expect(url.searchParams.get("sessionId")).toBe("bulk");
    }
    assertNoPageErrors(page);
    await page.context().close();
  });
});

import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

let host: StudioHost;
let browser: Browser;

beforeAll(async () => {
  [host, browser] = await Promise.all([
    startStudioHost({
      plugins: { echo: skillFolder({ name: "echo", input: { type: "object" } }, "return input;") },
    }),
    launchBrowser(),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([browser?.close(), host?.stop()]);
});

describe("the Studio shell", { timeout: 60_000 }, () => {
  it("loads from `skillbox dev` under its strict CSP, connects the live stream and names the caller", async () => {
    const page = await openStudio(browser, host.url);
    const navigation = page.getByRole("navigation", { name: "Studio" });
    for (const name of [
      "Skills",
      "Executions",
      "Approvals",
      "Activity",
      "Charts",
      "Interceptors & sandboxes",
    ]) {
      await expect(navigation.getByRole("link", { name, exact: true }).count()).resolves.toBe(1);
    }
    await page.locator("[data-live=live]").waitFor();
    // The caller is read apart from the shell's first render.
    await eventually(() => page.locator(".caller").textContent()).toContain("public");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("moves between pages by the links and by the keyboard", async () => {
    const page = await openStudio(browser, host.url);
    await page.getByRole("link", { name: "Executions", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Executions" }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/executions");
    await page.keyboard.press("Tab");
    await eventually(() => page.evaluate("document.activeElement?.tagName")).not.toBe("BODY");
    await page.goto(`${host.url}/#/no-such-page`);
    await page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor();
    assertNoPageErrors(page);
    await page.context().close();
  });
});

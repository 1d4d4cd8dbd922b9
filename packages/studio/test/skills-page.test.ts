// The Skills page on a real `skillbox dev` in Debian's Chromium: the listing, the filter, the
// enabled switch (refused for a skill the caller does not own, accepted for its own), load errors
// arriving and clearing live, and the statistics columns.
import { type CliProject, createCliProject, type RunningCli } from "@skillbox/test-helpers/cli-process";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

const PLUGINS = {
  echo: skillFolder(
    { name: "echo", description: "Repeats its input", tags: ["demo", "text"], input: { type: "object" } },
    "return input;",
  ),
  weather: skillFolder(
    {
      name: "weather",
      description: "Forecast for a city",
      tags: ["forecast"],
      input: { type: "object", properties: { city: { type: "string" } } },
    },
    "return { city: input.city, sky: 'clear' };",
  ),
  greeter: skillFolder(
    { name: "greeter", description: "Says hello", input: { type: "object" } },
    "return { hello: 'world' };",
  ),
};

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe("the Skills page", { timeout: 90_000 }, () => {
  let host: StudioHost;

  beforeAll(async () => {
    host = await startStudioHost({ plugins: PLUGINS });
  }, 60_000);

  afterAll(async () => {
    await host?.stop();
  });

  it("lists every skill with its source, runtime and tags, and filters by name, description and tag", async () => {
    const page = await openStudio(browser, host.url, { route: "#/skills" });
    await page.getByRole("heading", { level: 1, name: "Skills" }).waitFor();
    const table = page.getByRole("table", { name: "Skills" });
    const echo = table.locator('tr[data-skill="echo"]');
    await echo.waitFor();
    await eventually(() => table.locator("tr[data-skill]").count()).toBe(3);
    const text = (await echo.textContent()) ?? "";
    expect(text).toContain("1.0.0");
    expect(text).toContain("Folder");
    expect(text).toContain("echo");
    expect(text).toContain("demo");
    expect(text).toContain("inline");

    const filter = page.getByLabel("Filter skills");
    await filter.fill("forecast");
    await echo.waitFor({ state: "hidden" });
    await eventually(() => table.locator("tr[data-skill]").count()).toBe(1);
    await table.locator('tr[data-skill="weather"]').waitFor();
    await filter.fill("REPEATS input");
    await echo.waitFor();
    await eventually(() => table.locator("tr[data-skill]").count()).toBe(1);
    await filter.fill("no such skill");
    await page.getByText("No skill matches").waitFor();
    await filter.fill("");
    await eventually(() => table.locator("tr[data-skill]").count()).toBe(3);

    await table
      .locator('tr[data-skill="weather"]')
      .getByRole("link", { name: "weather", exact: true })
      .click();
    await page.getByRole("heading", { level: 1, name: "weather" }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/skills/weather");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("keeps the filter in the URL and the focus in the box while typing, from the start page too", async () => {
    const page = await openStudio(browser, host.url);
    const table = page.getByRole("table", { name: "Skills" });
    await table.locator('tr[data-skill="echo"]').waitFor();
    const filter = page.getByLabel("Filter skills");
    await filter.click();
    await filter.pressSequentially("wea");
    await table.locator('tr[data-skill="echo"]').waitFor({ state: "hidden" });
    // Echo hides at the first letter already: the rest of the typing is waited for.
    await eventually(() => filter.inputValue()).toBe("wea");
    const filterId = await filter.getAttribute("id");
    await eventually(() => page.evaluate("document.activeElement?.id")).toBe(filterId);
    await page.waitForURL((address) => address.hash === "#/skills?filter=wea");
    await page.reload();
    await eventually(() => page.getByLabel("Filter skills").inputValue()).toBe("wea");
    const reloaded = page.getByRole("table", { name: "Skills" });
    await reloaded.locator('tr[data-skill="weather"]').waitFor();
    await eventually(() => reloaded.locator("tr[data-skill]").count()).toBe(1);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("shows the server's refusal when the caller flips the switch of a skill it does not own", async () => {
    const page = await openStudio(browser, host.url, { route: "#/skills" });
    const row = page.getByRole("table", { name: "Skills" }).locator('tr[data-skill="echo"]');
    const toggle = row.getByRole("switch", { name: "Enable echo" });
    await toggle.waitFor();
    await expect(toggle.isChecked()).resolves.toBe(true);
    await toggle.click();
    // Folder skills belong to "system"; the keyless caller is "public".
    const refusal = row.getByRole("alert");
    await refusal.waitFor();
    await eventually(() => refusal.textContent()).toMatch(/belongs to owner "system".*FORBIDDEN/);
    await eventually(() => toggle.isChecked()).toBe(true);
    const answer = await fetch(`${host.url}/api/skills/echo`);
    const { skills } = (await answer.json()) as { skills: Array<{ enabled: boolean }> };
    expect(skills[0]?.enabled).toBe(true);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("shows a broken edit's load error in the row without a reload, and clears it once fixed", async () => {
    const page = await openStudio(browser, host.url, { route: "#/skills" });
    const row = page.getByRole("table", { name: "Skills" }).locator('tr[data-skill="greeter"]');
    await row.waitFor();
    await page.locator("[data-live=live]").waitFor();
    await page.evaluate("window.notReloaded = true");
    await expect(row.locator("[data-load-error]").count()).resolves.toBe(0);

    host.project.tree.write("plugins/greeter/skill.json", '{ "name": "greeter", "version": "1.0.0", ');
    const loadError = row.locator("[data-load-error]");
    await loadError.waitFor();
    const shown = (await loadError.textContent()) ?? "";
    expect(shown).toContain("skill.json");
    expect(shown).toContain("keeps serving");
    // The last good version is still listed, and still runs.
    const run = await fetch(`${host.url}/api/skills/greeter/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: {} }),
    });
    expect(run.status).toBe(200);

    host.project.tree.write("plugins/greeter/skill.json", PLUGINS.greeter["skill.json"]!);
    await loadError.waitFor({ state: "detached" });
    await expect(page.evaluate("window.notReloaded")).resolves.toBe(true);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("shows each skill's recent success rate and p50/p95, updated as executions finish", async () => {
    const page = await openStudio(browser, host.url, { route: "#/skills" });
    const row = page.getByRole("table", { name: "Skills" }).locator('tr[data-skill="weather"]');
    await row.waitFor();
    await page.locator("[data-live=live]").waitFor();
    const cells = row.locator("td.number");
    await eventually(() => cells.allTextContents()).toEqual(["—", "—", "—"]);
    const run = await fetch(`${host.url}/api/skills/weather/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: { city: "Oslo" } }),
    });
    expect(run.status).toBe(200);
    await row.getByText("100 %").waitFor();
    const duration = expect.stringMatching(/\d ms|\d s/);
    await eventually(async () => (await cells.allTextContents()).slice(1)).toEqual([duration, duration]);
    assertNoPageErrors(page);
    await page.context().close();
  });
});

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;

describe("the Skills page for the owner of the skills", { timeout: 90_000 }, () => {
  let project: CliProject;
  let server: RunningCli;
  let url: string;

  beforeAll(async () => {
    // The folder skills belong to the config's `owner`: the key of that owner may switch them.
    project = createCliProject();
    project.tree.write("skillbox.config.mjs", 'export default { owner: "alice" };\n');
    project.tree.writeFolder("plugins/echo", PLUGINS.echo);
    server = project.start(["dev", "--port", "0"], { env: { SKILLBOX_API_KEYS: "alice-key:alice" } });
    [, url = ""] = await server.waitForOutput(LISTENING, 30_000);
  }, 60_000);

  afterAll(async () => {
    await server?.stop("SIGTERM");
    await project?.cleanup();
  });

  it("disables and enables a skill with its switch; the server keeps the change", async () => {
    const page = await openStudio(browser, url, { route: "#/skills", apiKey: "alice-key" });
    const row = page.getByRole("table", { name: "Skills" }).locator('tr[data-skill="echo"]');
    const toggle = row.getByRole("switch", { name: "Enable echo" });
    await toggle.waitFor();
    await expect(toggle.isChecked()).resolves.toBe(true);
    await toggle.click();
    await row.getByText("Off", { exact: true }).waitFor();
    await eventually(() => toggle.isChecked()).toBe(false);
    await expect(row.getByRole("alert").count()).resolves.toBe(0);
    const enabled = async () => {
      const answer = await fetch(`${url}/api/skills/echo`, {
        headers: { authorization: "Bearer alice-key" },
      });
      const { skills } = (await answer.json()) as { skills: Array<{ enabled: boolean }> };
      return skills[0]?.enabled;
    };
    await eventually(enabled).toBe(false);

    await page.reload();
    const again = page.getByRole("table", { name: "Skills" }).locator('tr[data-skill="echo"]');
    const toggleAgain = again.getByRole("switch", { name: "Enable echo" });
    await toggleAgain.waitFor();
    await expect(toggleAgain.isChecked()).resolves.toBe(false);
    await toggleAgain.click();
    await again.getByText("On", { exact: true }).waitFor();
    await eventually(enabled).toBe(true);
    assertNoPageErrors(page);
    await page.context().close();
  });
});

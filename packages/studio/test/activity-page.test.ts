import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

let host: StudioHost;
let browser: Browser;
let page: Page;

const GREET = { name: "greet", input: { type: "object" } };

beforeAll(async () => {
  [host, browser] = await Promise.all([
    startStudioHost({
      plugins: { echo: skillFolder({ name: "echo", input: { type: "object" } }, "return input;") },
    }),
    launchBrowser(),
  ]);
  page = await openStudio(browser, host.url, { route: "#/activity" });
  await page.locator("[data-live=live]").waitFor();
}, 60_000);

afterAll(async () => {
  await page?.context().close();
  await Promise.all([browser?.close(), host?.stop()]);
});

const feed = () => page.getByRole("list", { name: "Activity feed" });

describe("the Activity page", { timeout: 60_000 }, () => {
  it("starts empty and says the stream has no history", async () => {
    await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
    await expect(feed().locator("li").count()).resolves.toBe(0);
    await eventually(() => page.locator(".empty").textContent()).toContain("No activity yet");
  });

  it("shows a new skill loaded, a broken edit as a load error naming the file, and the fix reloaded", async () => {
    host.project.tree.writeFolder("plugins/greet", skillFolder(GREET, 'return { hello: "world" };'));
    const loaded = feed().locator("li[data-activity-type=loaded]", { hasText: "greet@1.0.0" });
    await loaded.waitFor();
    await expect(loaded.textContent()).resolves.toContain("skill");

    host.project.tree.write(
      "plugins/greet/index.ts",
      "export default async function handler(input: any {\n  return input;\n}\n",
    );
    // Newest first: the failure tops the list (the skill's two files may have made two events).
    const failed = feed().locator("li:first-child[data-activity-type=load-error]");
    await failed.waitFor();
    const failure = (await failed.textContent()) ?? "";
    expect(failure).toContain("plugins/greet/index.ts");
    // The failure is told in words (not by colour alone).
    expect(failure).toContain("load error");
    expect(failure).toContain("Failed to load");

    host.project.tree.write(
      "plugins/greet/index.ts",
      'export default async function handler(): Promise<unknown> {\n  return { hello: "again" };\n}\n',
    );
    await feed().locator("li:first-child[data-activity-type=reloaded]", { hasText: "greet@1.0.0" }).waitFor();
    await expect(feed().locator("li").last().getAttribute("data-activity-type")).resolves.toBe("loaded");
    assertNoPageErrors(page);
  });

  it("keeps what it heard while another page was shown, interceptor changes included", async () => {
    const heard = await feed().locator("li").count();
    await page.getByRole("link", { name: "Skills", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Skills" }).waitFor();
    host.project.tree.writeFolder("plugins/stamp", {
      "interceptor.json": { name: "stamp", version: "2.0.0", handler: "./index.ts", order: 5 },
      "index.ts": "export default { before() { return undefined; } };\n",
    });
    // The System page reads the interceptor list afresh: once it shows "stamp", the loader has
    // announced it — while the Activity page was not shown.
    await page.getByRole("link", { name: "Interceptors & sandboxes", exact: true }).click();
    await page.getByRole("table", { name: "Interceptors" }).locator("tr[data-interceptor=stamp]").waitFor();

    await page.getByRole("link", { name: "Activity", exact: true }).click();
    const change = feed().locator("li[data-activity-type=loaded][data-activity-kind=interceptor]");
    await change.waitFor();
    const text = (await change.textContent()) ?? "";
    expect(text).toContain("stamp@2.0.0");
    expect(text).toContain("interceptor change");
    // What was seen before leaving the page is still there, below the new event.
    await eventually(() => feed().locator("li").count()).toBeGreaterThan(heard);
    await eventually(() => feed().locator("li").first().getAttribute("data-activity-kind")).toBe(
      "interceptor",
    );
    await eventually(() => feed().locator("li[data-activity-type=load-error]").count()).toBeGreaterThan(0);
    await feed()
      .locator("li[data-activity-type=loaded][data-activity-kind=skill]", { hasText: "greet" })
      .waitFor();
    assertNoPageErrors(page);
  });

  it("filters by type and by text", async () => {
    // Counts are polled: the feed re-renders a frame after the control changed.
    const count = (selector: string) => () => feed().locator(selector).count();
    const all = await count("li")();
    const loaded = await count("li[data-activity-type=loaded]")();
    await page.getByRole("checkbox", { name: "Loaded", exact: true }).uncheck();
    await eventually(count("li[data-activity-type=loaded]")).toBe(0);
    await eventually(count("li")).toBe(all - loaded);
    await page.getByRole("checkbox", { name: "Loaded", exact: true }).check();
    await eventually(count("li")).toBe(all);

    // Writing the interceptor's two files may have made one event or two: all of them match.
    const aboutStamp = await feed().locator("li", { hasText: "stamp" }).count();
    expect(aboutStamp).toBeGreaterThan(0);
    await page.getByLabel("Filter activity").fill("stamp");
    await eventually(count("li")).toBe(aboutStamp);
    await page.getByLabel("Filter activity").fill("index.ts");
    await eventually(count("li[data-activity-type=load-error]")).toBeGreaterThan(0);
    // Polled as a whole: under the previous filter ("stamp") a load error may have shown too.
    const types = async () =>
      new Set(
        await feed()
          .locator("li")
          .evaluateAll((items) => items.map((item) => item.getAttribute("data-activity-type"))),
      );
    await eventually(types).toEqual(new Set(["load-error"]));
    await page.getByLabel("Filter activity").fill("no such thing");
    await eventually(count("li")).toBe(0);
    await eventually(() => page.locator(".empty").textContent()).toContain("No activity matches");
    await page.getByLabel("Filter activity").fill("");
    await eventually(count("li")).toBe(all);
    assertNoPageErrors(page);
  });
});

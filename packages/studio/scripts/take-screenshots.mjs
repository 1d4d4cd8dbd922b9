// Takes the Studio screenshots of the docs (docs/studio/<page>.png), so they can be refreshed
// whenever the pages change: `pnpm --filter @skillbox/studio run screenshots` (after `pnpm build`).
//
// Starts a real `skillbox dev` on a demo project in a temp folder (scripts/demo-skills.mjs),
// makes its executions over the HTTP API, edits two handlers so the activity feed and a load
// error have something to show, then opens each main page in Debian's Chromium at 1280×800 and
// writes a viewport PNG. Stops the server and the browser it started, by their handles, and
// deletes the temp folder. A page that does not show what it should within the wait is still
// photographed, named on stderr, and makes the script exit 1.
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { DEMO_EXECUTIONS, demoHandler, writeDemoSkills } from "./demo-skills.mjs";
import { startSkillboxDev } from "./start-skillbox-dev.mjs";

const OUTPUT = fileURLToPath(new URL("../../../docs/studio/", import.meta.url));
const CHROMIUM = process.env.SKILLBOX_BROWSER_EXECUTABLE ?? "/usr/bin/chromium";
const VIEWPORT = { width: 1280, height: 800 };
/** How long a page may take to show its content before it is photographed as it is. */
const WAIT_MS = 15_000;
/**
 * The demo server has one approver key, so the header names a person and the approvals inbox has
 * its buttons (without keys only loopback callers may decide).
 */
const API_KEY = "studio-demo-key";
const OWNER = "maria";

const problems = [];
const temporary = mkdtempSync(join(tmpdir(), "skillbox-studio-screenshots-"));
let server;
let browser;

try {
  writeDemoSkills(join(temporary, "plugins"));
  [server, browser] = await Promise.all([
    startSkillboxDev({
      directory: temporary,
      database: join(temporary, ".data", "skillbox.db"),
      env: { SKILLBOX_API_KEYS: `${API_KEY}:${OWNER}+approver` },
    }),
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    }),
  ]);
  const ids = await makeExecutions(server.url);

  const context = await browser.newContext({
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    colorScheme: "light",
  });
  const page = await context.newPage();
  mkdirSync(OUTPUT, { recursive: true });
  // The key is kept for the tab's session: asked once, here.
  await page.goto(`${server.url}/`);
  await page.getByLabel("API key").fill(API_KEY, { timeout: WAIT_MS });
  await page.getByRole("button", { name: "Open the Studio" }).click();
  await page.getByRole("navigation", { name: "Studio" }).waitFor({ timeout: WAIT_MS });

  // The activity feed is live: open it, then edit — a reload, and a handler broken mid-edit.
  await open(page, "#/activity", async () => {
    await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor({ timeout: WAIT_MS });
    await page.locator("[data-live=live]").waitFor({ timeout: WAIT_MS });
    writeFileSync(join(temporary, "plugins", "greet", "index.ts"), `${demoHandler("greet")}// reviewed\n`);
    writeFileSync(
      join(temporary, "plugins", "word-count", "index.ts"),
      "export default function handler(input: { text: string } {\n  return input.text.length;\n}\n",
    );
    await page.locator('li[data-activity-type="load-error"]').first().waitFor({ timeout: WAIT_MS });
  });
  await shoot(page, "activity");

  await open(page, "#/skills", async () => {
    await page.locator('tr[data-skill="daily-digest"]').waitFor({ timeout: WAIT_MS });
    await page.locator('tr[data-skill="word-count"] [data-load-error]').waitFor({ timeout: WAIT_MS });
  });
  await shoot(page, "skills");

  await open(
    page,
    "#/skills/convert-temperature",
    async () => {
      const form = page.getByRole("form", { name: "Run convert-temperature" });
      await form.getByLabel("value", { exact: true }).fill("21.5", { timeout: WAIT_MS });
      await form.getByRole("button", { name: "Run", exact: true }).click();
      await page
        .getByRole("region", { name: "Result" })
        .getByRole("link", { name: "Open execution" })
        .waitFor({
          timeout: WAIT_MS,
        });
    },
    page.getByRole("form", { name: "Run convert-temperature" }),
  );
  await shoot(page, "skill");

  await open(page, "#/executions", () =>
    page.locator("tr[data-execution-id]").nth(5).waitFor({ timeout: WAIT_MS }),
  );
  await shoot(page, "executions");

  // The heading shows while the record loads: its output says it has.
  await open(page, `#/executions/${encodeURIComponent(ids.digest)}`, () =>
    page.getByRole("main").getByText("Hello, Ada").first().waitFor({ timeout: WAIT_MS }),
  );
  await shoot(page, "execution");

  await open(page, "#/approvals", () =>
    page
      .getByRole("table", { name: "Pending approvals" })
      .getByRole("button", { name: "Approve" })
      .first()
      .waitFor({
        timeout: WAIT_MS,
      }),
  );
  await shoot(page, "approvals");

  await open(page, "#/charts", async () => {
    await page
      .locator("figure", { hasText: "Executions per minute" })
      .locator("canvas")
      .first()
      .waitFor({ timeout: WAIT_MS });
    await page
      .locator("figure", { hasText: "Duration by skill" })
      .locator("canvas")
      .first()
      .waitFor({ timeout: WAIT_MS });
  });
  await shoot(page, "charts");

  await open(page, "#/system", async () => {
    await page
      .getByRole("table", { name: "Interceptors" })
      .getByText("audit-trail")
      .first()
      .waitFor({ timeout: WAIT_MS });
    await page.getByRole("region", { name: "Sandboxes" }).waitFor({ timeout: WAIT_MS });
  });
  await shoot(page, "system");
  await context.close();
} catch (error) {
  problems.push(error instanceof Error ? error.message : String(error));
  if (server !== undefined) problems.push(`skillbox dev said:\n${server.output().slice(-4000)}`);
} finally {
  await browser?.close();
  await server?.stop();
  rmSync(temporary, { recursive: true, force: true });
}

if (problems.length > 0) {
  console.error(`\nSome screenshots may not show what they should:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}

/**
 * Goes to `route` and waits for `ready`; a page that is not ready is noted, not fatal. `scrollTo`
 * (a locator) is scrolled to the top of the viewport: what the picture is about.
 */
async function open(page, route, ready, scrollTo) {
  await page.goto(`${server.url}/${route}`);
  try {
    await ready();
  } catch (error) {
    problems.push(`${route}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
  // Focus rings and the caret of the last click are not part of the page.
  await page.evaluate(() => {
    if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    window.scrollTo(0, 0);
  });
  if (scrollTo !== undefined) {
    await scrollTo
      .evaluate((element) => element.scrollIntoView({ block: "start" }), undefined, { timeout: WAIT_MS })
      .catch((error) => problems.push(`${route}: ${error.message.split("\n")[0]}`));
  }
}

/** Writes the viewport of `page` to docs/studio/<name>.png. */
async function shoot(page, name) {
  const file = join(OUTPUT, `${name}.png`);
  await page.screenshot({ path: file, animations: "disabled", caret: "hide" });
  console.log(`docs/studio/${name}.png  ${Math.round(statSync(file).size / 1024)} KB`);
}

/** Runs every demo execution over the API (publish-post stops for approval); returns a few ids. */
async function makeExecutions(url) {
  const ids = {};
  for (const [skill, input] of DEMO_EXECUTIONS) {
    const response = await fetch(`${url}/api/skills/${encodeURIComponent(skill)}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ input, sessionId: skill === "daily-digest" ? "morning-run" : undefined }),
    });
    const body = await response.json();
    // 200 done, 202 awaiting approval; a 4xx is a demo input the skill refuses, on purpose.
    if (response.status >= 500) throw new Error(`POST ${skill}: ${response.status} ${JSON.stringify(body)}`);
    if (skill === "daily-digest" && ids.digest === undefined) ids.digest = body.id;
  }
  if (ids.digest === undefined) throw new Error("the daily-digest execution gave no id");
  return ids;
}

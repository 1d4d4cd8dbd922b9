// The acceptance journey, end to end: a real `skillbox dev` on loopback and Debian's
// Chromium, driven only by the accessible names the Studio promises (its contract), never by
// classes or layout. Each step waits for what a person would see; nothing sleeps.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

const GREET_MANIFEST = {
  name: "greet",
  description: "Says hello to someone",
  input: {
    type: "object",
    properties: { name: { type: "string", description: "Who to greet" } },
    required: ["name"],
    additionalProperties: false,
  },
  output: { type: "object", properties: { greeting: { type: "string" } } },
};

/** The `greet` folder answering `<word>, <name>`: each version of the journey says another word. */
function greetFolder(word: string) {
  return skillFolder(GREET_MANIFEST, `return { greeting: \`${word}, \${input.name}\` };`);
}

const PLUGINS = {
  greet: greetFolder("Hello"),
  // A neighbour the filter must hide.
  "word-count": skillFolder(
    { name: "word-count", input: { type: "object", properties: { text: { type: "string" } } } },
    "return { words: String(input.text ?? '').split(/\\s+/).filter(Boolean).length };",
  ),
};

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** Runs `greet` from its generated form on `page` (already on its skill page); resolves with the execution id. */
async function runGreetFromForm(page: Page, name: string, expectedGreeting: string): Promise<string> {
  const form = page.getByRole("form", { name: "Run greet" });
  await form.getByLabel("name", { exact: true }).fill(name);
  await form.getByRole("button", { name: "Run", exact: true }).click();
  const result = page.getByRole("region", { name: "Result" });
  await result.getByText(expectedGreeting).first().waitFor();
  const link = result.getByRole("link", { name: "Open execution" });
  const target = await link.getAttribute("href");
  const match = /#\/executions\/([^/?]+)$/.exec(target ?? "");
  if (match === null) throw new Error(`"Open execution" links to ${target}, not #/executions/<id>`);
  return decodeURIComponent(match[1]!);
}

describe("the Studio journey on `skillbox dev`", { timeout: 120_000 }, () => {
  let host: StudioHost;

  beforeAll(async () => {
    host = await startStudioHost({ plugins: PLUGINS });
  }, 60_000);

  afterAll(async () => {
    await host?.stop();
  });

  it("finds a skill, runs it from its generated form, sees the execution arrive live in the table and opens it", async () => {
    // One tab keeps the executions table open: the new row must come to it without a reload.
    const watching = await openStudio(browser, host.url, { route: "#/executions" });
    await watching.getByRole("heading", { level: 1, name: "Executions" }).waitFor();
    await watching.getByRole("table", { name: "Executions" }).waitFor();
    await watching.locator("[data-live=live]").waitFor();
    // A global of this document: a reload would start a new one without it.
    await watching.evaluate(() => {
      (globalThis as unknown as { journeyMarker: string }).journeyMarker = "not reloaded";
    });

    const page = await openStudio(browser, host.url);
    await page.getByRole("heading", { level: 1, name: "Skills" }).waitFor();
    const skills = page.getByRole("table", { name: "Skills" });
    await skills.locator('tr[data-skill="word-count"]').waitFor();
    await page.getByLabel("Filter skills").fill("gree");
    await skills.locator('tr[data-skill="word-count"]').waitFor({ state: "hidden" });
    const row = skills.locator('tr[data-skill="greet"]');
    await row.waitFor();
    await row.getByRole("link", { name: "greet", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "greet" }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/skills/greet");

    const executionId = await runGreetFromForm(page, "Ada", "Hello, Ada");

    const arrived = watching.locator(`tr[data-execution-id="${executionId}"]`);
    await arrived.waitFor();
    await expect(
      watching.evaluate(() => (globalThis as unknown as { journeyMarker?: string }).journeyMarker),
    ).resolves.toBe("not reloaded");
    await arrived.getByRole("link").first().click();
    await watching.getByRole("heading", { level: 1, name: /^Execution/ }).waitFor();
    expect(new URL(watching.url()).hash).toBe(`#/executions/${encodeURIComponent(executionId)}`);
    await watching.getByRole("main").getByText("Hello, Ada").first().waitFor();

    // The form's own link leads to the same page.
    await page.getByRole("region", { name: "Result" }).getByRole("link", { name: "Open execution" }).click();
    await page.getByRole("heading", { level: 1, name: /^Execution/ }).waitFor();
    await page.getByRole("main").getByText("Hello, Ada").first().waitFor();

    assertNoPageErrors(watching);
    assertNoPageErrors(page);
    await Promise.all([watching.context().close(), page.context().close()]);
  });

  it("shows a broken handler's load error in the skill's row while the last good version runs, and clears it once fixed", async () => {
    const page = await openStudio(browser, host.url, { route: "#/skills" });
    const row = page.getByRole("table", { name: "Skills" }).locator('tr[data-skill="greet"]');
    await row.waitFor();
    await page.locator("[data-live=live]").waitFor();
    await expect(row.locator("[data-load-error]").count()).resolves.toBe(0);

    host.project.tree.write("plugins/greet/index.ts", "export default async function handler(input: any {\n");
    const loadError = row.locator("[data-load-error]");
    await loadError.waitFor();
    // The row says what the API says: the file at fault and the loader's message.
    const answer = await fetch(`${host.url}/api/skills/greet`);
    const { skills } = (await answer.json()) as {
      skills: Array<{ lastLoadError: { file: string; message: string } | null }>;
    };
    const failure = skills[0]?.lastLoadError;
    if (failure == null)
      throw new Error("GET /api/skills/greet shows no lastLoadError for the broken handler");
    const shown = () => loadError.textContent();
    await eventually(shown).toContain("index.ts");
    await eventually(shown).toContain(failure.message.split("\n")[0]!.slice(0, 60));

    // The last good version keeps serving.
    await row.getByRole("link", { name: "greet", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "greet" }).waitFor();
    await runGreetFromForm(page, "Grace", "Hello, Grace");

    // Back on the table, still broken; the fix clears the error where the person is looking.
    await page
      .getByRole("navigation", { name: "Studio" })
      .getByRole("link", { name: "Skills", exact: true })
      .click();
    await loadError.waitFor();
    host.project.tree.write("plugins/greet/index.ts", greetFolder("Hi")["index.ts"]!);
    await loadError.waitFor({ state: "hidden" });
    await row.getByRole("link", { name: "greet", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "greet" }).waitFor();
    await runGreetFromForm(page, "Grace", "Hi, Grace");

    assertNoPageErrors(page);
    await page.context().close();
  });
});

describe("the Studio journey with API keys", { timeout: 120_000 }, () => {
  let host: StudioHost;

  beforeAll(async () => {
    host = await startStudioHost({ plugins: PLUGINS, apiKeys: "good-key:alice,other-key:bob" });
  }, 60_000);

  afterAll(async () => {
    await host?.stop();
  });

  /** Runs `greet` over the API with `key`; resolves with the execution id. */
  async function executeOverApi(key: string, name: string): Promise<string> {
    const response = await fetch(`${host.url}/api/skills/greet/execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ input: { name } }),
    });
    const body = (await response.json()) as { id: string; status: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe("success");
    return body.id;
  }

  it("refuses a wrong key with a clear message, then shows the right key's owner only their own executions", async () => {
    const bobs = await executeOverApi("other-key", "Bob");
    const alices = await executeOverApi("good-key", "Alice");

    const page = await openStudio(browser, host.url, { route: "#/executions" });
    const keyInput = page.getByLabel("API key");
    await keyInput.fill("wrong-key");
    await page.getByRole("button", { name: "Open the Studio" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toMatch(/^That key was not accepted/);
    await expect(page.getByRole("navigation", { name: "Studio" }).count()).resolves.toBe(0);

    await keyInput.fill("good-key");
    await page.getByRole("button", { name: "Open the Studio" }).click();
    await page.getByRole("navigation", { name: "Studio" }).waitFor();
    await page.getByRole("heading", { level: 1, name: "Executions" }).waitFor();
    const table = page.getByRole("table", { name: "Executions" });
    await table.locator(`tr[data-execution-id="${alices}"]`).waitFor();
    // The page has rendered alice's listing: bob's execution is simply not in it.
    await expect(table.locator(`tr[data-execution-id="${bobs}"]`).count()).resolves.toBe(0);
    await eventually(() => table.locator("tr[data-execution-id]").count()).toBe(1);
    await page.getByText(/Showing 1–1 of 1/).waitFor();

    assertNoPageErrors(page);
    await page.context().close();
  });

  it("changes the key: forgets the old one, puts the focus in the prompt, then shows the new owner's executions only", async () => {
    const alices = await executeOverApi("good-key", "Alice again");
    const bobs = await executeOverApi("other-key", "Bob again");
    const page = await openStudio(browser, host.url, { route: "#/executions", apiKey: "good-key" });
    const table = page.getByRole("table", { name: "Executions" });
    await table.locator(`tr[data-execution-id="${alices}"]`).waitFor();

    await page.getByRole("button", { name: "Change key" }).click();
    const keyInput = page.getByLabel("API key");
    await keyInput.waitFor();
    await eventually(() => keyInput.inputValue()).toBe("");
    // The prompt takes the focus once it has rendered.
    await eventually(() => page.evaluate(() => document.activeElement?.id)).toBe("api-key");
    await eventually(() => page.evaluate(() => sessionStorage.length)).toBe(0);

    await keyInput.fill("other-key");
    await page.getByRole("button", { name: "Open the Studio" }).click();
    await table.locator(`tr[data-execution-id="${bobs}"]`).waitFor();
    await expect(table.locator(`tr[data-execution-id="${alices}"]`).count()).resolves.toBe(0);
    // The caller is read apart from the listing.
    await eventually(() => page.locator(".caller").textContent()).toContain("bob");
    assertNoPageErrors(page);
    await page.context().close();
  });
});

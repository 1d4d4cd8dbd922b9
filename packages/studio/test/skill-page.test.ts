// A skill's page on a real `skillbox dev` in Debian's Chromium: the run form generated from its
// input schema (every field kind), examples filling it, checks before sending, the server's 422
// violations, approval, and the execution each run made.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/eventually.js";
import { reloadWithHeldStream, startHeldLiveStream } from "./helpers/held-live-stream.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

const ORDER_INPUT = {
  type: "object",
  required: ["customer", "quantity"],
  additionalProperties: false,
  properties: {
    customer: { type: "string", minLength: 2, description: "Who orders" },
    quantity: { type: "integer", minimum: 1, maximum: 10, default: 1 },
    size: { enum: ["small", "medium", "large"] },
    gift: { type: "boolean" },
    address: {
      type: "object",
      required: ["city"],
      properties: { city: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{4}$" } },
    },
    tags: { type: "array", items: { type: "string" } },
    notes: { type: "object", additionalProperties: { type: "string" } },
  },
};

const PLUGINS = {
  order: skillFolder(
    {
      name: "order",
      description: "Places an order",
      tags: ["shop"],
      timeoutMs: 5000,
      input: ORDER_INPUT,
      output: { type: "object" },
      examples: [
        { description: "A small gift", input: { customer: "Ada", quantity: 2, size: "small", gift: true } },
      ],
    },
    "return { received: input };",
  ),
  "order-old": {
    ...skillFolder({ name: "order", version: "0.9.0", input: ORDER_INPUT }, "return { old: true };"),
  },
  strict: skillFolder(
    {
      name: "strict",
      input: { type: "object", required: ["id"], properties: { id: { type: "string", format: "uuid" } } },
    },
    "return input;",
  ),
  free: skillFolder({ name: "free", input: { type: "object" } }, "return input;"),
  guarded: skillFolder(
    {
      name: "guarded",
      approval: "required",
      input: { type: "object", properties: { why: { type: "string" } } },
    },
    "return { done: true };",
  ),
};

let host: StudioHost;
let browser: Browser;

beforeAll(async () => {
  [host, browser] = await Promise.all([startStudioHost({ plugins: PLUGINS }), launchBrowser()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([browser?.close(), host?.stop()]);
});

/** Opens a skill's page the way a person would: the Skills page, the filter, the link. */
async function openSkill(name: string): Promise<Page> {
  const page = await openStudio(browser, host.url, { route: "#/skills" });
  await page.getByLabel("Filter skills").fill(name);
  const row = page.getByRole("table", { name: "Skills" }).locator(`tr[data-skill="${name}"]`);
  await row.getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { level: 1, name }).waitFor();
  await page.locator("[data-live=live]").waitFor();
  return page;
}

/** Records every execute request the page sends. */
/** Waits (long-polling the API) until execution `id` has ended. */
async function waitForFinished(id: string): Promise<void> {
  const response = await fetch(`${host.url}/api/executions/${encodeURIComponent(id)}?wait=30`);
  const record = (await response.json()) as { status: string };
  expect(["queued", "pending", "running", "awaiting_approval"]).not.toContain(record.status);
}

function executeRequests(page: Page): string[] {
  const sent: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().includes("/execute"))
      sent.push(request.postData() ?? "");
  });
  return sent;
}

describe("the skill page", { timeout: 90_000 }, () => {
  it("shows the skill's facts, schemas and versions", async () => {
    const page = await openSkill("order");
    const main = page.getByRole("main");
    await main.getByText("Places an order").first().waitFor();
    const facts = (await main.locator("dl").textContent()) ?? "";
    expect(facts).toContain("1.0.0");
    expect(facts).toContain("inline");
    expect(facts).toContain("5.00 s");
    expect(facts).toContain("shop");
    await main.getByText("Input schema").waitFor();
    await main.getByText("Output schema").waitFor();
    const versions = page.getByLabel("Version");
    await eventually(() => versions.locator("option").allTextContents()).toEqual([
      "1.0.0 (what “order” runs)",
      "1.0.0",
      "0.9.0",
    ]);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("runs the skill from the generated form (text, number, enum, boolean, nested object, array item, JSON part) and links the execution", async () => {
    const page = await openSkill("order");
    const sent = executeRequests(page);
    const form = page.getByRole("form", { name: "Run order" });
    await expect(form.getByLabel("quantity", { exact: true }).inputValue()).resolves.toBe("1");
    await form.getByLabel("customer", { exact: true }).fill("Grace");
    await form.getByLabel("quantity", { exact: true }).fill("3");
    await form.getByLabel("size", { exact: true }).selectOption("large");
    await form.getByLabel("gift", { exact: true }).check();
    await form.getByLabel("address.city", { exact: true }).fill("Oslo");
    await form.getByRole("button", { name: "Add to tags" }).click();
    await form.getByLabel("tags[0]", { exact: true }).fill("drop");
    await form.getByRole("button", { name: "Add to tags" }).click();
    await form.getByLabel("tags[1]", { exact: true }).fill("rush");
    await form.getByRole("button", { name: "Remove tags[0]" }).click();
    await form.getByLabel("tags[1]", { exact: true }).waitFor({ state: "detached" });
    await eventually(() => form.getByLabel("tags[0]", { exact: true }).inputValue()).toBe("rush");
    await form.getByLabel("notes (JSON)", { exact: true }).fill('{ "door": "blue" }');
    await form.getByRole("button", { name: "Run", exact: true }).click();

    const result = page.getByRole("region", { name: "Result" });
    await result.locator("[data-status=success]").waitFor();
    const output = async () => JSON.parse((await result.locator("pre").textContent()) ?? "null");
    await eventually(output).toEqual({
      received: {
        customer: "Grace",
        quantity: 3,
        size: "large",
        gift: true,
        address: { city: "Oslo" },
        tags: ["rush"],
        notes: { door: "blue" },
      },
    });
    expect(sent).toHaveLength(1);
    const link = result.getByRole("link", { name: "Open execution" });
    const target = (await link.getAttribute("href")) ?? "";
    const id = decodeURIComponent(/^#\/executions\/([^/?]+)$/.exec(target)?.[1] ?? "");
    expect(id).not.toBe("");

    // The recent executions follow, live.
    await page
      .getByRole("table", { name: "Recent executions of order" })
      .locator(`tr[data-execution-id="${id}"]`)
      .waitFor();
    // The execution page is another page's test; this one checks the link leads there.
    assertNoPageErrors(page);
    await link.click();
    await page.getByRole("heading", { level: 1, name: /^Execution/ }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/executions/${encodeURIComponent(id)}`);
    await page.context().close();
  });

  it("fills the form from an example", async () => {
    const page = await openSkill("order");
    await page.getByRole("button", { name: "Use this example" }).click();
    const form = page.getByRole("form", { name: "Run order" });
    // The form re-renders after the click: each value is waited for.
    await eventually(() => form.getByLabel("customer", { exact: true }).inputValue()).toBe("Ada");
    await eventually(() => form.getByLabel("quantity", { exact: true }).inputValue()).toBe("2");
    await eventually(() =>
      form.getByLabel("size", { exact: true }).locator("option:checked").textContent(),
    ).toBe("small");
    await eventually(() => form.getByLabel("gift", { exact: true }).isChecked()).toBe(true);
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.locator("[data-status=success]").waitFor();
    await eventually(async () => JSON.parse((await result.locator("pre").textContent()) ?? "null")).toEqual({
      received: { customer: "Ada", quantity: 2, size: "small", gift: true },
    });
    // Each recent execution's link shows the random end of its id (UUIDv7 ids of one minute
    // share their start), so two runs of the same minute read apart.
    const recent = page.getByRole("table", { name: "Recent executions of order" });
    const href = (await result.getByRole("link", { name: "Open execution" }).getAttribute("href")) ?? "";
    const id = decodeURIComponent(href.split("/").pop() ?? "");
    await recent.locator(`tr[data-execution-id="${id}"]`).waitFor();
    for (const row of await recent.locator("tr[data-execution-id]").all()) {
      const rowId = (await row.getAttribute("data-execution-id")) ?? "";
      const text = ((await row.getByRole("link").textContent()) ?? "").replace("…", "");
      expect(text.length).toBeGreaterThanOrEqual(12);
      expect(rowId.endsWith(text)).toBe(true);
    }
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("names missing required fields and bad values before sending anything", async () => {
    const page = await openSkill("order");
    const sent = executeRequests(page);
    const form = page.getByRole("form", { name: "Run order" });
    await form.getByLabel("quantity", { exact: true }).fill("12");
    await form.getByLabel("address.zip", { exact: true }).fill("12a");
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const summary = form.getByRole("alert");
    await summary.waitFor();
    const text = (await summary.textContent()) ?? "";
    expect(text).toContain("customer is required");
    expect(text).toContain("quantity must be at most 10");
    expect(text).toContain("address.city is required");
    expect(text).toContain("address.zip must match the pattern");
    const customer = form.getByLabel("customer", { exact: true });
    await eventually(() => customer.getAttribute("aria-invalid")).toBe("true");
    // The problem is next to the field, and the field is described by it.
    await eventually(() => form.locator('[data-field="customer"] .form-issue').textContent()).toBe(
      "customer is required",
    );
    // The focus moves to the first field at fault after the render.
    const customerId = await customer.getAttribute("id");
    await eventually(() => page.evaluate("document.activeElement?.id")).toBe(customerId);
    // Fixing a field clears its problem.
    await customer.fill("Bo");
    await form.locator('[data-field="customer"] .form-issue').waitFor({ state: "detached" });
    expect(sent).toEqual([]);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("switches to raw JSON, shows a parse error inline and sends nothing until it parses", async () => {
    const page = await openSkill("order");
    const sent = executeRequests(page);
    const form = page.getByRole("form", { name: "Run order" });
    await form.getByLabel("customer", { exact: true }).fill("Lin");
    await form.getByRole("switch", { name: "Edit as JSON" }).check();
    const json = form.getByLabel("Input (JSON)", { exact: true });
    await eventually(async () => JSON.parse(await json.inputValue())).toEqual({
      customer: "Lin",
      quantity: 1,
    });
    await json.fill('{ "customer": "Lin", ');
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const problem = form.getByRole("alert");
    await problem.waitFor();
    await eventually(() => problem.textContent()).toMatch(/^Input \(JSON\) is not valid JSON/);
    // The form cannot take it back while it does not parse.
    await form.getByRole("switch", { name: "Edit as JSON" }).click();
    await form.getByText(/the form cannot show it/).waitFor();
    await eventually(() => json.isVisible()).toBe(true);
    await eventually(() => form.getByLabel("customer", { exact: true }).count()).toBe(0);
    expect(sent).toEqual([]);

    await json.fill('{ "customer": "Lin", "quantity": 4 }');
    await problem.waitFor({ state: "detached" });
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.locator("[data-status=success]").waitFor();
    expect(sent).toHaveLength(1);
    // Back to the form with what the JSON said.
    await form.getByRole("switch", { name: "Edit as JSON" }).uncheck();
    await eventually(() => form.getByLabel("quantity", { exact: true }).inputValue()).toBe("4");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("shows the server's 422 violations in the Result and next to the field they name", async () => {
    const page = await openSkill("strict");
    const form = page.getByRole("form", { name: "Run strict" });
    await form.getByLabel("id", { exact: true }).fill("not-a-uuid");
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("INPUT_INVALID").waitFor();
    const violations = result.getByRole("list", { name: "Schema violations" });
    await eventually(() => violations.textContent()).toContain('id must match format "uuid"');
    await eventually(() => form.locator('[data-field="id"] .form-issue').textContent()).toContain(
      'must match format "uuid"',
    );
    await eventually(() => form.getByLabel("id", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    await result.getByRole("link", { name: "Open execution" }).waitFor();
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("says when a run waits for approval and links its execution", async () => {
    const page = await openSkill("guarded");
    const form = page.getByRole("form", { name: "Run guarded" });
    await form.getByLabel("why", { exact: true }).fill("testing");
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.locator("[data-status=awaiting_approval]").waitFor();
    await result.getByText(/needs approval/).waitFor();
    const target = (await result.getByRole("link", { name: "Open execution" }).getAttribute("href")) ?? "";
    const id = decodeURIComponent(/^#\/executions\/([^/?]+)$/.exec(target)?.[1] ?? "");
    expect(id).not.toBe("");
    // Approved elsewhere (here over the API, from this machine), the result follows it live to its end.
    const approved = await fetch(`${host.url}/api/executions/${encodeURIComponent(id)}/approve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(approved.status, await approved.clone().text()).toBe(200);
    await result.locator("[data-status=success]").waitFor();
    await eventually(async () => JSON.parse((await result.locator("pre").textContent()) ?? "null")).toEqual({
      done: true,
    });
    await eventually(() => result.getByText(/needs approval/).count()).toBe(0);
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("reads a waiting run again after a gap in the live stream, so its result does not stay stale", async () => {
    const stream = await startHeldLiveStream();
    try {
      const page = await openSkill("guarded");
      // The page's stream now hears nothing of the server until it reconnects.
      await reloadWithHeldStream(page, stream);
      const form = page.getByRole("form", { name: "Run guarded" });
      await form.getByRole("button", { name: "Run", exact: true }).click();
      const result = page.getByRole("region", { name: "Result" });
      await result.locator("[data-status=awaiting_approval]").waitFor();
      const target = (await result.getByRole("link", { name: "Open execution" }).getAttribute("href")) ?? "";
      const id = decodeURIComponent(/^#\/executions\/([^/?]+)$/.exec(target)?.[1] ?? "");
      const approved = await fetch(`${host.url}/api/executions/${encodeURIComponent(id)}/approve`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(approved.status, await approved.clone().text()).toBe(200);
      await waitForFinished(id);

      // The execution ended while the page heard nothing; the reconnect must bring it up to date.
      stream.end();
      await result.locator("[data-status=success]").waitFor();
      assertNoPageErrors(page);
      await page.context().close();
    } finally {
      await stream.close();
    }
  });

  it("runs the version picked", async () => {
    const page = await openSkill("order");
    await page.getByLabel("Version").selectOption("0.9.0");
    // The details (and the form) of 0.9.0 replace those of 1.0.0: fill the new form, not the old one.
    await page
      .getByRole("main")
      .locator("dd", { hasText: /^0\.9\.0$/ })
      .waitFor();
    const form = page.getByRole("form", { name: "Run order" });
    await form.getByLabel("customer", { exact: true }).fill("Old");
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.locator("[data-status=success]").waitFor();
    await eventually(async () => JSON.parse((await result.locator("pre").textContent()) ?? "null")).toEqual({
      old: true,
    });
    expect(new URL(page.url()).hash).toBe("#/skills/order?version=0.9.0");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("falls back to raw JSON for a whole schema the form cannot express", async () => {
    const page = await openSkill("free");
    const form = page.getByRole("form", { name: "Run free" });
    await form.getByLabel("Input (JSON)", { exact: true }).fill('{ "anything": [1, 2] }');
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.locator("[data-status=success]").waitFor();
    await eventually(async () => JSON.parse((await result.locator("pre").textContent()) ?? "null")).toEqual({
      anything: [1, 2],
    });
    assertNoPageErrors(page);
    await page.context().close();
  });
});

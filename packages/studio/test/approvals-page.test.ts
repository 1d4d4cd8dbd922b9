// Approvals in the Studio against a real `skillbox dev` in Debian's Chromium: a skill with
// `"approval": "required"` waits, shows up in the inbox live, and is approved or rejected from the
// pages; a key that is not an approver key sees why it cannot decide, and the server refuses it.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide, readExecution, runSkill } from "./executions/execution-requests.js";
import { eventually } from "./helpers/eventually.js";
import { assertNoPageErrors, launchBrowser, openStudio } from "./helpers/studio-browser.js";
import { type StudioHost, skillFolder, startStudioHost } from "./helpers/studio-host.js";

const PLUGINS = {
  transfer: skillFolder(
    {
      name: "transfer",
      approval: "required",
      input: {
        type: "object",
        properties: { amount: { type: "number" } },
        required: ["amount"],
      },
    },
    "return { sent: input.amount };",
  ),
};

/** Two keys of alice: one may run, read and cancel her executions, the other may also decide. */
const READER = "k1";
const APPROVER = "k2";

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

let host: StudioHost;

beforeAll(async () => {
  host = await startStudioHost({ plugins: PLUGINS, apiKeys: `${READER}:alice,${APPROVER}:alice+approver` });
}, 60_000);

afterAll(async () => {
  await host?.stop();
});

describe("approvals decided from the Studio by an approver key", { timeout: 90_000 }, () => {
  it("shows a waiting execution in the inbox live, approves it from there, and it runs to success", async () => {
    const page = await openStudio(browser, host.url, { route: "#/approvals", apiKey: APPROVER });
    await page.getByRole("heading", { level: 1, name: "Approvals" }).waitFor();
    await page.locator("[data-live=live]").waitFor();
    await page.getByText("Nothing awaits a decision.").waitFor();

    // The stream's `ready` makes the page list once more: the first row might come with that
    // listing; the second comes after it, so only the live events can bring it.
    const earlier = (await runSkill(host, "transfer", { input: { amount: 11 }, apiKey: READER })).execution;
    const table = page.getByRole("table", { name: "Pending approvals" });
    await table.locator(`tr[data-execution-id="${earlier.id}"]`).waitFor();
    const { status, execution } = await runSkill(host, "transfer", { input: { amount: 12 }, apiKey: READER });
    expect(status).toBe(202);
    expect(execution.status).toBe("awaiting_approval");
    const row = table.locator(`tr[data-execution-id="${execution.id}"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("transfer@1.0.0 requires approval before it runs");
    await expect(row.textContent()).resolves.toContain('{"amount":12}');
    await expect(row.locator(`a[href="#/executions/${execution.id}"]`).count()).resolves.toBe(1);

    await row.getByRole("button", { name: "Approve", exact: true }).click();
    await row.waitFor({ state: "detached" });
    const finished = await readExecution(host, execution.id, { waitSeconds: 45, apiKey: READER });
    expect(finished.status).toBe("success");
    expect(finished.output).toEqual({ sent: 12 });
    // The other one waits on, until it is decided too.
    const earlierRow = table.locator(`tr[data-execution-id="${earlier.id}"]`);
    // Polled: the decision made the page list again.
    await eventually(() => earlierRow.count()).toBe(1);
    await earlierRow.getByRole("button", { name: "Reject", exact: true }).click();
    await earlierRow.waitFor({ state: "detached" });
    await page.getByText("Nothing awaits a decision.").waitFor();
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("rejects from the inbox: the execution ends rejected", async () => {
    const { execution } = await runSkill(host, "transfer", { input: { amount: 99 }, apiKey: READER });
    const page = await openStudio(browser, host.url, { route: "#/approvals", apiKey: APPROVER });
    const row = page
      .getByRole("table", { name: "Pending approvals" })
      .locator(`tr[data-execution-id="${execution.id}"]`);
    await row.getByRole("button", { name: "Reject", exact: true }).click();
    await row.waitFor({ state: "detached" });
    await expect(
      readExecution(host, execution.id, { apiKey: READER }).then((record) => record.status),
    ).resolves.toBe("rejected");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("approves from the execution page with a comment and an edited input, after the server refused a bad one", async () => {
    const { execution } = await runSkill(host, "transfer", { input: { amount: 5 }, apiKey: READER });
    const page = await openStudio(browser, host.url, {
      route: `#/executions/${execution.id}`,
      apiKey: APPROVER,
    });
    await page.getByRole("heading", { level: 1, name: /^Execution of transfer/ }).waitFor();
    await expect(page.locator("[data-approval-reason]").textContent()).resolves.toContain(
      "requires approval",
    );
    await expect(page.locator("[data-approval-decision]").textContent()).resolves.toBe("pending");

    await page.getByLabel("Comment (optional)").fill("checked with finance");
    await page.getByLabel("Change the input before it runs").check();
    await page.getByLabel("Input to run (JSON)").fill('{ "amount": "seven" }');
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    // The server checks the edited input against the schema and refuses it, saying which field.
    const alert = page.getByRole("alert");
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toContain("INPUT_INVALID");
    await expect(alert.textContent()).resolves.toContain("amount");
    await expect(
      readExecution(host, execution.id, { apiKey: READER }).then((record) => record.status),
    ).resolves.toBe("awaiting_approval");

    await page.getByLabel("Input to run (JSON)").fill('{ "amount": 7 }');
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await page.locator('section.execution-page[data-status="success"]').waitFor();
    // The status may come from a live event before the record is read again: each fact is waited for.
    await eventually(() => page.locator("[data-approval-decision]").textContent()).toBe("approved");
    await eventually(() => page.getByRole("region", { name: "Output", exact: true }).textContent()).toContain(
      '"sent": 7',
    );
    await eventually(() => page.getByRole("main").textContent()).toContain("checked with finance");
    await eventually(() => page.getByRole("main").textContent()).toContain("changed by the approver");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("rejects from the execution page with a reason", async () => {
    const { execution } = await runSkill(host, "transfer", { input: { amount: 1000 }, apiKey: READER });
    const page = await openStudio(browser, host.url, {
      route: `#/executions/${execution.id}`,
      apiKey: APPROVER,
    });
    await page.getByLabel("Reason (optional)").fill("too much at once");
    await page.getByRole("button", { name: "Reject", exact: true }).click();
    await page.locator('section.execution-page[data-status="rejected"]').waitFor();
    await eventually(() => page.locator("[data-approval-decision]").textContent()).toBe("rejected");
    for (const name of ["Approve", "Reject", "Cancel"]) {
      await eventually(() => page.getByRole("button", { name, exact: true }).count()).toBe(0);
    }
    const stored = await readExecution(host, execution.id, { apiKey: READER });
    expect(stored.status).toBe("rejected");
    expect(JSON.stringify(stored)).toContain("too much at once");
    assertNoPageErrors(page);
    await page.context().close();
  });

  it("keeps the finished state the live stream showed when the approve answer (an earlier state) comes after it", async () => {
    const { execution } = await runSkill(host, "transfer", { input: { amount: 8 }, apiKey: READER });
    const page = await openStudio(browser, host.url, {
      route: `#/executions/${execution.id}`,
      apiKey: APPROVER,
    });
    await page.locator("[data-live=live]").waitFor();
    // The approve answer is held back until the live `finished` event has shown the end.
    let answered: unknown;
    await page.route("**/api/executions/*/approve", async (route) => {
      const response = await route.fetch();
      answered = await response.json();
      await page.locator('section.execution-page[data-status="success"]').waitFor();
      await route.fulfill({ response });
    });
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    // The answer has been handled once the page says what the action did.
    await page
      .getByRole("status")
      .filter({ hasText: /^Approved: the execution is now / })
      .waitFor();
    expect((answered as { status: string }).status).not.toBe("success");
    await expect(page.locator("section.execution-page").getAttribute("data-status")).resolves.toBe("success");
    await expect(page.getByRole("button", { name: "Cancel", exact: true }).count()).resolves.toBe(0);
    assertNoPageErrors(page);
    await page.context().close();
  });
});

describe("approvals seen by a key that may not decide", { timeout: 90_000 }, () => {
  it("shows a non-approver key why it cannot decide, while the server refuses it; an approver key decides", async () => {
    const { execution } = await runSkill(host, "transfer", { input: { amount: 3 }, apiKey: READER });
    expect(execution.status).toBe("awaiting_approval");

    const reader = await openStudio(browser, host.url, { route: "#/approvals", apiKey: READER });
    const row = reader
      .getByRole("table", { name: "Pending approvals" })
      .locator(`tr[data-execution-id="${execution.id}"]`);
    await row.waitFor();
    await reader.locator("[data-not-approver]").waitFor();
    await expect(reader.locator("[data-not-approver]").textContent()).resolves.toContain("alice+approver");
    await expect(reader.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    await expect(reader.getByRole("button", { name: "Reject" }).count()).resolves.toBe(0);

    await row.getByRole("link").click();
    await reader.getByRole("heading", { level: 1, name: /^Execution of transfer/ }).waitFor();
    await reader.locator("[data-not-approver]").waitFor();
    await expect(reader.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    await expect(reader.getByRole("button", { name: "Reject" }).count()).resolves.toBe(0);
    // It may still cancel its owner's execution: only deciding needs the approver role.
    await eventually(() => reader.getByRole("button", { name: "Cancel", exact: true }).count()).toBe(1);

    const refused = await decide(host, execution.id, "approve", { apiKey: READER });
    expect(refused.status).toBe(403);
    expect(refused.body.error?.code).toBe("FORBIDDEN");

    const approver = await openStudio(browser, host.url, { route: "#/approvals", apiKey: APPROVER });
    const approverRow = approver
      .getByRole("table", { name: "Pending approvals" })
      .locator(`tr[data-execution-id="${execution.id}"]`);
    await approverRow.getByRole("button", { name: "Approve", exact: true }).click();
    await approverRow.waitFor({ state: "detached" });
    const finished = await readExecution(host, execution.id, { waitSeconds: 45, apiKey: READER });
    expect(finished.status).toBe("success");
    // The reader's page hears it too: the execution it shows ran.
    await reader.locator('section.execution-page[data-status="success"]').waitFor();
    await expect(approver.locator("[data-not-approver]").count()).resolves.toBe(0);

    assertNoPageErrors(reader);
    assertNoPageErrors(approver);
    await Promise.all([reader.context().close(), approver.context().close()]);
  });
});

describe("the approvals inbox's pages", { timeout: 90_000 }, () => {
  it("keeps a way back when the decisions emptied a later page", async () => {
    // One more than a page: the last one is alone on the second page.
    const waiting: string[] = [];
    for (let index = 0; index < 51; index += 1) {
      const { execution } = await runSkill(host, "transfer", { input: { amount: index }, apiKey: READER });
      waiting.push(execution.id);
    }
    const page = await openStudio(browser, host.url, { route: "#/approvals", apiKey: APPROVER });
    const table = page.getByRole("table", { name: "Pending approvals" });
    await table.locator("tr[data-execution-id]").first().waitFor();
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText("Showing 51–51 of 51").waitFor();
    const row = table.locator("tr[data-execution-id]");
    await eventually(() => row.count()).toBe(1);
    const alone = await row.getAttribute("data-execution-id");
    expect(waiting).toContain(alone);
    await row.getByRole("button", { name: "Reject", exact: true }).click();
    await page.getByText("No pending approvals this far back.").waitFor();
    // Nothing is shown: the range says so rather than "0–50".
    await eventually(() => page.locator(".pagination-range").textContent()).toBe("Showing 0–0 of 50");
    const previous = page.getByRole("button", { name: "Previous page" });
    await eventually(() => previous.isEnabled()).toBe(true);
    await previous.click();
    await page.getByText("Showing 1–50 of 50").waitFor();
    await eventually(() => table.locator("tr[data-execution-id]").count()).toBe(50);
    assertNoPageErrors(page);
    await page.context().close();
  });
});

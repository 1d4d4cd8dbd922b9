import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { beforeAll, describe, expect, it } from "vitest";
import interact from "../interact/index.ts";
import { isPng, pngSize } from "../lib/png-image.ts";
import { useBrowserTestBed } from "./helpers/browser-test-bed.ts";
import { expectManifestSchemas } from "./helpers/browser-test-host.ts";
import type { PageServer } from "./helpers/page-server.ts";

const FORM = `<!doctype html><title>Form</title>
<form method="post" action="/submit">
  <input name="name" id="name">
  <select name="color" id="color"><option value="red">Red</option><option value="blue">Blue</option></select>
  <label><input type="checkbox" name="agree" value="yes" id="agree"> agree</label>
  <button type="submit" id="send">Send</button>
</form>`;

const WIDGETS = `<!doctype html><title>Widgets</title>
<button id="add" onclick="count.textContent = String(Number(count.textContent) + 1)">Add</button>
<span id="count">0</span>
<input id="search" onkeydown="if (event.key === 'Enter') out.textContent = 'searched ' + this.value">
<p id="out"></p>
<button id="later" onclick="setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'late arrival'; document.body.append(p); }, 200)">Later</button>`;

interface InteractOutput {
  url: string;
  title: string;
  text: string;
  completed: boolean;
  steps: { action: string; selector: string; ok: boolean; error?: string }[];
  screenshot?: { format: string; width: number; height: number; bytes: number; base64: string };
}

const bed = useBrowserTestBed();
let site: PageServer;
let outside: PageServer;

beforeAll(async () => {
  outside = await bed.pageServer({ "/": "<title>Outside</title>outside" });
  site = await bed.pageServer({
    "/form": FORM,
    "/submit": (_request, response, body) => {
      const fields = new URLSearchParams(body);
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<title>Thanks</title><p id="result">Hello ${fields.get("name")}, ${fields.get("color")}, agree: ${fields.get("agree") ?? "no"}</p>`,
        );
    },
    "/widgets": WIDGETS,
    "/leave": `<title>Leave</title><a id="away" href="${outside.url("/")}">away</a>`,
  });
});

function hostAllowingSite(): Promise<TemporaryHost> {
  // The page server is on loopback, which pages reach only when allowPrivate lists it.
  return bed.host({ allowedHosts: [site.host], allowPrivate: ["127.0.0.1"] });
}

describe("browser.interact", () => {
  it("default-exports a defined skill with the schemas of its skill.json", () => {
    expectManifestSchemas("interact", interact);
  });

  it("fills, selects, checks and submits a form, then reads the result page", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.interact", {
      url: site.url("/form"),
      steps: [
        { action: "fill", selector: "#name", value: "Ada" },
        { action: "select", selector: "#color", value: "blue" },
        { action: "check", selector: "#agree" },
        { action: "click", selector: "#send" },
      ],
      extract: "#result",
    });
    expect(execution.error).toBeNull();
    const output = execution.output as InteractOutput;
    expect(output).toMatchObject({
      url: site.url("/submit"),
      title: "Thanks",
      text: "Hello Ada, blue, agree: yes",
      completed: true,
    });
    expect(output.steps).toEqual([
      { action: "fill", selector: "#name", ok: true },
      { action: "select", selector: "#color", ok: true },
      { action: "check", selector: "#agree", ok: true },
      { action: "click", selector: "#send", ok: true },
    ]);
    expect(site.requests).toContain("POST /submit");
  });

  it("clicks, presses keys and waits for elements that change the page in place", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.interact", {
      url: site.url("/widgets"),
      steps: [
        { action: "click", selector: "#add" },
        { action: "click", selector: "#add" },
        { action: "fill", selector: "#search", value: "owls" },
        { action: "press", selector: "#search", key: "Enter" },
        { action: "click", selector: "#later" },
        { action: "wait-for", selector: "#late" },
      ],
    });
    const output = execution.output as InteractOutput;
    expect(output.completed).toBe(true);
    expect(output.text).toContain("Add 2");
    expect(output.text).toContain("searched owls");
    expect(output.text).toContain("late arrival");
  });

  it("stops at the first failing step, reports it and keeps the page's state", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.interact", {
      url: site.url("/widgets"),
      steps: [
        { action: "click", selector: "#add" },
        { action: "fill", selector: "#add", value: "a button cannot be filled" },
        { action: "click", selector: "#add" },
      ],
      extract: "#count",
    });
    expect(execution.status).toBe("success");
    const output = execution.output as InteractOutput;
    expect(output.completed).toBe(false);
    expect(output.text).toBe("1");
    expect(output.steps).toHaveLength(2);
    expect(output.steps[0]).toEqual({ action: "click", selector: "#add", ok: true });
    expect(output.steps[1]).toMatchObject({ action: "fill", selector: "#add", ok: false });
    expect(output.steps[1]?.error).toMatch(/not an <input>/i);
  });

  it("refuses a click that navigates to a host outside the allowlist, without reaching it", async () => {
    const host = await hostAllowingSite();
    const before = outside.requests.length;
    const execution = await host.executor.execute("browser.interact", {
      url: site.url("/leave"),
      steps: [{ action: "click", selector: "#away" }],
    });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain(outside.host);
    expect(outside.requests.length).toBe(before);
  });

  it("returns a screenshot of the final page when asked", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.interact", {
      url: site.url("/widgets"),
      steps: [{ action: "click", selector: "#add" }],
      screenshot: true,
      viewport: { width: 500, height: 300 },
    });
    const shot = (execution.output as InteractOutput).screenshot;
    expect(shot).toMatchObject({ format: "png", width: 500, height: 300 });
    const png = Buffer.from(shot?.base64 ?? "", "base64");
    expect(isPng(png)).toBe(true);
    expect(pngSize(png)).toEqual({ width: 500, height: 300 });
  });

  it("rejects scripts that are too long or steps missing their value", async () => {
    const host = await hostAllowingSite();
    const tooLong = await host.executor.execute("browser.interact", {
      url: site.url("/widgets"),
      steps: Array.from({ length: 21 }, () => ({ action: "click", selector: "#add" })),
    });
    expect(tooLong.error?.code).toBe("INPUT_INVALID");
    const noValue = await host.executor.execute("browser.interact", {
      url: site.url("/form"),
      steps: [{ action: "fill", selector: "#name" }],
    });
    expect(noValue.error?.code).toBe("INPUT_INVALID");
  });
});

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { isPng, pngSize } from "../lib/png-image.ts";
import screenshot from "../screenshot/index.ts";
import { useBrowserTestBed } from "./helpers/browser-test-bed.ts";
import { expectManifestSchemas } from "./helpers/browser-test-host.ts";
import type { PageServer } from "./helpers/page-server.ts";

const TALL_PAGE = `<!doctype html><title>Tall</title><style>body { margin: 0 }</style>
<div style="height: 2000px; background: linear-gradient(red, blue)">tall</div>
<div id="box" style="width: 120px; height: 80px; background: green"></div>`;

interface ScreenshotOutput {
  format: string;
  width: number;
  height: number;
  bytes: number;
  base64?: string;
  path?: string;
  truncated: boolean;
}

const bed = useBrowserTestBed();
let site: PageServer;
let workspaceRoot: string;

beforeAll(async () => {
  site = await bed.pageServer({ "/": TALL_PAGE });
});

afterEach(() => {
  if (workspaceRoot !== undefined) rmSync(workspaceRoot, { recursive: true, force: true });
});

function hostAllowingSite(): Promise<TemporaryHost> {
  workspaceRoot = mkdtempSync(join(tmpdir(), "skillbox-browser-workspaces-"));
  return bed.host({ allowedHosts: [site.host], allowPrivate: ["127.0.0.1"], workspaceRoot });
}

function decode(output: ScreenshotOutput): Buffer {
  return Buffer.from(output.base64 ?? "", "base64");
}

describe("browser.screenshot", () => {
  it("default-exports a defined skill with the schemas of its skill.json", () => {
    expectManifestSchemas("screenshot", screenshot);
  });

  it("returns a base64 PNG of the viewport, sized as asked", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.screenshot", {
      url: site.url("/"),
      viewport: { width: 640, height: 400 },
    });
    expect(execution.error).toBeNull();
    const output = execution.output as ScreenshotOutput;
    const png = decode(output);
    expect(isPng(png)).toBe(true);
    expect(pngSize(png)).toEqual({ width: 640, height: 400 });
    expect(output).toMatchObject({
      format: "png",
      width: 640,
      height: 400,
      bytes: png.length,
      truncated: false,
    });
    expect(output.path).toBeUndefined();
  });

  it("captures the whole page with fullPage", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.screenshot", {
      url: site.url("/"),
      fullPage: true,
      viewport: { width: 400, height: 300 },
    });
    const png = decode(execution.output as ScreenshotOutput);
    expect(pngSize(png)).toEqual({ width: 400, height: 2080 });
  });

  it("captures only the element a selector picks", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.screenshot", {
      url: site.url("/"),
      selector: "#box",
    });
    const png = decode(execution.output as ScreenshotOutput);
    expect(pngSize(png)).toEqual({ width: 120, height: 80 });
  });

  it("writes the PNG into the caller's workspace when output is file", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute(
      "browser.screenshot",
      { url: site.url("/"), output: "file", path: "shots/home.png", viewport: { width: 320, height: 200 } },
      { apiKeyId: "acme" },
    );
    expect(execution.error).toBeNull();
    const output = execution.output as ScreenshotOutput;
    expect(output).toMatchObject({ format: "png", width: 320, height: 200, path: "shots/home.png" });
    expect(output.base64).toBeUndefined();
    const file = readFileSync(join(workspaceRoot, "acme", "shots", "home.png"));
    expect(isPng(file)).toBe(true);
    expect(file.length).toBe(output.bytes);
    expect(pngSize(file)).toEqual({ width: 320, height: 200 });
  });

  it.each(["../escape.png", "shots/../../escape.png", "/tmp/escape.png"])(
    "refuses the path %s with PATH_REFUSED and writes nothing",
    async (path) => {
      const host = await hostAllowingSite();
      const execution = await host.executor.execute(
        "browser.screenshot",
        { url: site.url("/"), output: "file", path },
        { apiKeyId: "acme" },
      );
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("PATH_REFUSED");
      expect(readdirSync(workspaceRoot)).toEqual(["acme"]);
      expect(readdirSync(join(workspaceRoot, "acme"))).toEqual([]);
      expect(existsSync(join(workspaceRoot, "escape.png"))).toBe(false);
    },
  );

  it("asks for a path when output is file, and refuses a path without it", async () => {
    const host = await hostAllowingSite();
    const withoutPath = await host.executor.execute("browser.screenshot", {
      url: site.url("/"),
      output: "file",
    });
    expect(withoutPath.error?.code).toBe("INPUT_INVALID");
    expect(withoutPath.error?.message).toContain("`path` is required");
    const pathOnly = await host.executor.execute("browser.screenshot", { url: site.url("/"), path: "a.png" });
    expect(pathOnly.error?.code).toBe("INPUT_INVALID");
  });

  it("refuses a viewport outside its bounds", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.screenshot", {
      url: site.url("/"),
      viewport: { width: 100_000, height: 200 },
    });
    expect(execution.error?.code).toBe("INPUT_INVALID");
  });

  it("refuses a host outside the allowlist", async () => {
    const host = await hostAllowingSite();
    const execution = await host.executor.execute("browser.screenshot", { url: "http://127.0.0.2:9/" });
    expect(execution.error?.code).toBe("URL_REFUSED");
  });
});

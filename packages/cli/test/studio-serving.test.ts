import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
});

afterEach(async () => {
  await project.cleanup();
});

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;
const STUDIO = /Studio: (http:\/\/\S+\/)\n/;

/** The page at `url` and the first asset its index.html names, as a browser would load them. */
async function loadStudio(url: string): Promise<{ page: Response; html: string; asset: Response }> {
  const page = await fetch(url);
  const html = await page.text();
  const first = /(?:src|href)="\.\/(assets\/[^"]+)"/.exec(html)?.[1];
  expect(first, `no asset named in ${html}`).toBeDefined();
  const asset = await fetch(new URL(first ?? "", url));
  return { page, html, asset };
}

describe("skillbox serve and dev: the Studio", { timeout: 60_000 }, () => {
  it("serve prints the Studio URL and answers its page and assets there", async () => {
    const server = project.start(["serve", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);
    const [, studioUrl] = await server.waitForOutput(STUDIO);

    expect(studioUrl).toBe(`${url}/`);
    expect(studioUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const { page, html, asset } = await loadStudio(studioUrl ?? "");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(html).toContain("<title>Skillbox Studio</title>");
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await server.stop("SIGTERM")).code).toBe(0);
  });

  it("keyless dev: a caller on this machine is an approver (the server sees the connection's peer address)", async () => {
    const server = project.start(["dev", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);

    const caller = await fetch(`${url}/api/caller`);

    expect(await caller.json()).toEqual({ owner: "public", approver: true, apiKeysConfigured: false });
    expect((await server.stop("SIGTERM")).code).toBe(0);
  });

  it("dev --no-studio serves no page: / is the API's 404, and no Studio URL is printed", async () => {
    const server = project.start(["dev", "--port", "0", "--no-studio"]);
    const [, url] = await server.waitForOutput(LISTENING);

    const page = await fetch(`${url}/`);
    const health = await fetch(`${url}/health`);

    expect(page.status).toBe(404);
    expect(((await page.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    expect(health.status).toBe(200);
    const stopped = await server.stop("SIGTERM");
    expect(stopped.stdout).not.toMatch(/Studio:/);
  });

  it("`studio: false` in the config turns it off; a value that is no boolean is CONFIG_INVALID", async () => {
    project.tree.write("skillbox.config.mjs", "export default { studio: false };\n");
    const server = project.start(["serve", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);

    const page = await fetch(`${url}/`);

    expect(page.status).toBe(404);
    const stopped = await server.stop("SIGTERM");
    expect(stopped.stdout).not.toMatch(/Studio:/);

    project.tree.write("skillbox.config.mjs", 'export default { studio: "yes" };\n');
    const invalid = await project.run(["serve", "--port", "0"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("skillbox.config.mjs: `studio` must be true or false");
  });

  it("with API keys the page loads without a key while the API refuses a request without one", async () => {
    const server = project.start(["serve", "--port", "0"], { env: { SKILLBOX_API_KEYS: "studio-key:acme" } });
    const [, studioUrl] = await server.waitForOutput(STUDIO);

    const { page, asset } = await loadStudio(studioUrl ?? "");
    const skills = await fetch(new URL("api/skills", studioUrl));
    const withKey = await fetch(new URL("api/skills", studioUrl), {
      headers: { authorization: "Bearer studio-key" },
    });

    expect(page.status).toBe(200);
    expect(asset.status).toBe(200);
    expect(skills.status).toBe(401);
    expect(withKey.status).toBe(200);
    expect((await server.stop("SIGTERM")).code).toBe(0);
  });
});

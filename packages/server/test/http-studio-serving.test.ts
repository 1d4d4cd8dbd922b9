import { readFileSync, truncateSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { studioAssetsDirectory } from "@skillbox/studio";
import { createTemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_STUDIO_BYTES, MAX_STUDIO_FILES, readStudioFiles } from "../src/http/studio-files.js";
import { createHttpApp } from "../src/index.js";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const trees: TemporaryTree[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) tree.cleanup();
});

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const INDEX =
  '<!doctype html><html><head><script type="module" src="./assets/app-1a2b.js"></script></head></html>\n';
// Repetitive, so gzip shrinks it: the test can tell the two representations apart.
const SCRIPT = `${"console.log('studio');\n".repeat(200)}`;
const SECRET = "do-not-serve-this-secret";

/** A Studio build in a temp folder, with a secret file beside it that no request may reach. */
function fakeBuild(files: Record<string, string> = {}): TemporaryTree {
  const tree = createTemporaryTree("skillbox-studio-");
  trees.push(tree);
  tree.write("secret.txt", SECRET);
  tree.write("build/index.html", INDEX);
  tree.write("build/assets/app-1a2b.js", SCRIPT);
  tree.write("build/assets/style-3c4d.css", "body { color: black }\n");
  for (const [path, content] of Object.entries(files)) tree.write(join("build", path), content);
  return tree;
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A request sent as written (no path normalisation, no automatic decompression), as an attacker would. */
function raw(
  api: TestApi,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(api.server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      hostname,
      port,
      path,
      method: options.method ?? "GET",
      agent: false,
      headers: options.headers,
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    });
    request.end();
  });
}

function expectSecurityHeaders(headers: IncomingHttpHeaders): void {
  expect(headers["content-security-policy"]).toBe(CSP);
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("no-referrer");
  expect(headers["x-frame-options"]).toBe("DENY");
}

describe("createHttpApp: the Studio", () => {
  it("answers / and /index.html with index.html, revalidated every time, with the security headers", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });

    for (const path of ["/", "/index.html"]) {
      const response = await raw(api, path);

      expect(response.status).toBe(200);
      expect(response.body.toString()).toBe(INDEX);
      expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(response.headers["cache-control"]).toBe("no-cache");
      expect(response.headers.etag).toMatch(/^"[\w-]+"$/);
      expectSecurityHeaders(response.headers);
    }
  });

  it("answers /assets/* with its content type and immutable caching", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });

    const script = await raw(api, "/assets/app-1a2b.js");
    const style = await raw(api, "/assets/style-3c4d.css");

    expect(script.status).toBe(200);
    expect(script.body.toString()).toBe(SCRIPT);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(script.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(script.headers["content-length"]).toBe(String(Buffer.byteLength(SCRIPT)));
    expect(style.headers["content-type"]).toBe("text/css; charset=utf-8");
    expectSecurityHeaders(script.headers);
  });

  it("answers gzip only to a client that accepts it, and says it varies by Accept-Encoding", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });

    const gzipped = await raw(api, "/assets/app-1a2b.js", { headers: { "accept-encoding": "br, gzip" } });
    const plain = await raw(api, "/assets/app-1a2b.js");
    const refused = await raw(api, "/assets/app-1a2b.js", { headers: { "accept-encoding": "gzip;q=0, br" } });
    const star = await raw(api, "/assets/app-1a2b.js", { headers: { "accept-encoding": "*" } });

    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.body.byteLength).toBeLessThan(Buffer.byteLength(SCRIPT));
    expect(gunzipSync(gzipped.body).toString()).toBe(SCRIPT);
    expect(gzipped.headers.vary).toBe("Accept-Encoding");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);
    expect(plain.headers.vary).toBe("Accept-Encoding");
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(star.headers["content-encoding"]).toBe("gzip");
    // Two representations, two strong ETags.
    expect(gzipped.headers.etag).not.toBe(plain.headers.etag);
  });

  it("answers 304 without a body to a matching If-None-Match, 200 to a stale one", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });
    const first = await raw(api, "/assets/app-1a2b.js", { headers: { "accept-encoding": "gzip" } });
    const etag = String(first.headers.etag);

    const revalidated = await raw(api, "/assets/app-1a2b.js", {
      headers: { "accept-encoding": "gzip", "if-none-match": `"other", W/${etag}` },
    });
    const stale = await raw(api, "/assets/app-1a2b.js", {
      headers: { "accept-encoding": "gzip", "if-none-match": '"not-this-one"' },
    });

    expect(revalidated.status).toBe(304);
    expect(revalidated.body.byteLength).toBe(0);
    expect(revalidated.headers.etag).toBe(etag);
    expect(revalidated.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expectSecurityHeaders(revalidated.headers);
    expect(stale.status).toBe(200);
  });

  it("answers HEAD with the headers of GET and no body", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });

    const head = await raw(api, "/", { method: "HEAD" });

    expect(head.status).toBe(200);
    expect(head.body.byteLength).toBe(0);
    expect(head.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(INDEX)));
    expectSecurityHeaders(head.headers);
  });

  it("serves nothing outside the files of the build: traversal, encoded or not, is 404", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });

    for (const path of [
      "/../secret.txt",
      "/assets/../../secret.txt",
      "/assets/%2e%2e/%2e%2e/secret.txt",
      "/assets/..%2f..%2fsecret.txt",
      "/assets/%2E%2E%2F%2E%2E%2Fsecret.txt",
      "/assets/..%5c..%5csecret.txt",
      "/%2e%2e/secret.txt",
      "/assets/%252e%252e/%252e%252e/secret.txt",
      "/assets/",
      "/assets",
      "//secret.txt",
      "/secret.txt",
    ]) {
      const response = await raw(api, path);

      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(response.body.toString()).not.toContain(SECRET);
      expect(JSON.parse(response.body.toString()).error.code).toBe("NOT_FOUND");
    }
  });

  it("reads the file list once: a file added afterwards is not served", async () => {
    const tree = fakeBuild();
    const api = await startApi({ studio: { directory: tree.path("build") } });

    tree.write("build/assets/late-5e6f.js", "late");
    const late = await raw(api, "/assets/late-5e6f.js");

    expect(late.status).toBe(404);
  });

  it("keeps in memory only the files it can serve: index.html and assets/", () => {
    const tree = fakeBuild({ "notes.txt": "never served", "docs/guide.html": "never served" });

    const table = readStudioFiles(tree.path("build"));

    expect([...(table?.keys() ?? [])].sort()).toEqual([
      "/assets/app-1a2b.js",
      "/assets/style-3c4d.css",
      "/index.html",
    ]);
  });

  it("leaves /health, /api and unknown paths to the API, even when the build holds such files", async () => {
    const tree = fakeBuild({ health: "shadow", "api/skills": "shadow", ".well-known/agent-card.json": "{}" });
    const api = await startApi({ studio: { directory: tree.path("build") } });

    const health = await api.call("GET", "/health");
    const skills = await api.call("GET", "/api/skills");
    const card = await api.call("GET", "/.well-known/agent-card.json");
    const unknown = await api.call("GET", "/nothing-here");
    const post = await api.call("POST", "/", { json: {} });

    expect(health.body.status).toBe("ok");
    expect(skills.status).toBe(200);
    expect(Array.isArray(skills.body.skills ?? skills.body)).toBe(true);
    expect(card.body.name).toBeTypeOf("string");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
    expect(post.status).toBe(404);
  });

  it("is off with `studio: false`: / is the API's 404", async () => {
    const api = await startApi({ studio: false });

    const response = await api.call("GET", "/");

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("NOT_FOUND");
  });

  it("without API keys answers only loopback host names, as the API does", async () => {
    const api = await startApi({ studio: { directory: fakeBuild().path("build") } });
    const { port } = new URL(api.server.url);

    const foreign = await raw(api, "/", { headers: { host: "evil.example" } });
    const foreignAsset = await raw(api, "/assets/app-1a2b.js", { headers: { host: `evil.example:${port}` } });
    const local = await raw(api, "/", { headers: { host: `localhost:${port}` } });

    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body.toString()).error.code).toBe("HOST_NOT_ALLOWED");
    expect(foreign.body.toString()).not.toContain("<html");
    expectSecurityHeaders(foreign.headers);
    expect(foreignAsset.status).toBe(403);
    expect(local.status).toBe(200);
  });

  it("with API keys serves the page without a key (it asks for one) while /api still needs one", async () => {
    const api = await startApi({
      apiKeys: { "alice-key": "alice" },
      studio: { directory: fakeBuild().path("build") },
    });
    api.host.registry.register(echoSkill({ apiKeyId: "alice" }));

    const page = await raw(api, "/", { headers: { host: "studio.example.com" } });
    const asset = await raw(api, "/assets/app-1a2b.js");
    const withoutKey = await api.call("GET", "/api/skills");
    const withKey = await api.call("GET", "/api/skills", { key: "alice-key" });

    expect(page.status).toBe(200);
    expect(page.body.toString()).toBe(INDEX);
    expect(asset.status).toBe(200);
    expect(withoutKey.status).toBe(401);
    expect(withKey.status).toBe(200);
  });

  it("without a build answers / with 503 naming `pnpm build`, and createHttpApp does not throw", async () => {
    const tree = fakeBuild();
    const api = await startApi({ studio: { directory: tree.path("no-build-here") } });
    const empty = await startApi({ studio: { directory: tree.path("build/assets") } });

    const page = await raw(api, "/");
    const asset = await raw(api, "/assets/app-1a2b.js");
    const health = await api.call("GET", "/health");
    const noIndex = await raw(empty, "/index.html");

    expect(page.status).toBe(503);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body.toString()).toContain("pnpm build");
    expectSecurityHeaders(page.headers);
    expect(asset.status).toBe(404);
    expect(health.status).toBe(200);
    expect(noIndex.status).toBe(503);
  });

  it("refuses a folder far larger than a Studio build with SERVER_CONFIG_INVALID naming the option", async () => {
    const tree = fakeBuild();
    for (let index = 0; index <= MAX_STUDIO_FILES; index += 1)
      tree.write(`build/assets/file-${index}.js`, "x");
    const host = createTemporaryHost();
    try {
      const create = () =>
        createHttpApp({
          registry: host.registry,
          executor: host.executor,
          studio: { directory: tree.path("build") },
        });

      expect(create).toThrow(
        expect.objectContaining({
          code: "SERVER_CONFIG_INVALID",
          message: expect.stringContaining("`studio.directory`"),
        }),
      );
    } finally {
      await host.dispose();
    }
  });

  it("refuses a folder of more bytes than a Studio build before reading them", async () => {
    const tree = fakeBuild();
    // Sparse: stat says its size, no disk is spent.
    truncateSync(tree.write("build/assets/huge.bin", ""), MAX_STUDIO_BYTES + 1);
    const host = createTemporaryHost();
    try {
      const create = () =>
        createHttpApp({
          registry: host.registry,
          executor: host.executor,
          studio: { directory: tree.path("build") },
        });

      expect(create).toThrow(
        expect.objectContaining({ code: "SERVER_CONFIG_INVALID", message: expect.stringContaining("bytes") }),
      );
    } finally {
      await host.dispose();
    }
  });

  it("serves the build @skillbox/studio ships by default: its index.html and the assets it names", async () => {
    const api = await startApi();
    const index = readFileSync(join(studioAssetsDirectory, "index.html"), "utf8");
    const assets = [...index.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((match) => match[1]);

    const page = await raw(api, "/");

    expect(page.status).toBe(200);
    expect(page.body.toString()).toBe(index);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      const response = await raw(api, `/${asset}`, { headers: { "accept-encoding": "gzip" } });
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      expect(response.headers["content-encoding"]).toBe("gzip");
    }
  });
});

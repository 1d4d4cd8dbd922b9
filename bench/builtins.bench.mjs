// Cost of the built-in skills against what a caller would write by hand, on loopback pages:
// - browser.extract through the executor (one shared Chromium, a fresh context and allowlist proxy
//   per execution) against raw playwright-core on a reused browser with a fresh context per page
//   (the floor), and against launching Chromium per page (what reuse saves);
// - http-request through the executor (SSRF guard, header filtering, size cap, audit trail)
//   against a bare fetch of the same URL.
// The plugins are loaded from ./plugins by the loader, as users get them.
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { createSkillHost } from "@skillbox/core";
import { loadSkills } from "@skillbox/loader";
import { importFresh } from "@skillbox/loader/internal";
import { chromium } from "playwright-core";
import { formatMs, printTable, silentLogger, temporaryDirectory } from "./lib/fixtures.mjs";
import { compareRates, sequentialRate } from "./lib/measure.mjs";

const PAGES = Number(process.env.BENCH_PAGES ?? 10);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CHROMIUM = process.env.SKILLBOX_BROWSER_EXECUTABLE ?? "/usr/bin/chromium";

const PAGE = `<!doctype html><title>bench</title><h1>Hello</h1>${Array.from(
  { length: 20 },
  (_, index) => `<p>Paragraph ${index} <a href="/link/${index}">link ${index}</a></p>`,
).join("")}`;

function startServer() {
  const server = createServer((request, response) => {
    if (request.url === "/json") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true, items: [1, 2, 3] }));
      return;
    }
    response.writeHead(200, { "content-type": "text/html" });
    response.end(PAGE);
  });
  return new Promise((done) => server.listen(0, "127.0.0.1", () => done(server)));
}

const directory = temporaryDirectory("skillbox-bench-builtins-");
const server = await startServer();
const origin = `http://127.0.0.1:${server.address().port}`;
process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = new URL(origin).host;
process.env.SKILLBOX_HTTP_ALLOW_PRIVATE = "127.0.0.1";
process.env.SKILLBOX_BROWSER_ALLOW_PRIVATE = "127.0.0.1";
const host = createSkillHost({ database: join(directory.path, "bench.db"), logger: silentLogger() });
const loaded = await loadSkills({
  dirs: [resolve(import.meta.dirname, "../plugins")],
  npm: false,
  registry: host.registry,
  executor: host.executor,
});
// The logger interceptor from plugins/ would print a line per execution.
host.executor.removeInterceptor("logger");
// The raw baseline launches Chromium exactly as the skills do.
const pool = await importFresh(resolve(import.meta.dirname, "../plugins/browser/lib/browser-pool.ts"));
const launchOptions = pool.browserLaunchOptions(CHROMIUM);
const rawBrowser = await chromium.launch(launchOptions);

async function expectSuccess(reference, input) {
  const execution = await host.executor.execute(reference, input);
  if (execution.status !== "success") throw new Error(`${reference}: ${JSON.stringify(execution.error)}`);
}

async function rawExtract(browser) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${origin}/page`, { waitUntil: "load" });
    // biome-ignore lint/performance/useDomNodeTextContent: the skill reads the rendered text too.
    await page.innerText("body");
    await page.$$eval("a", (links) => links.map((link) => [link.textContent, link.href]));
  } finally {
    await context.close();
  }
}

try {
  const browserCases = {
    rawReused: () => sequentialRate(PAGES, () => rawExtract(rawBrowser)),
    skill: () => sequentialRate(PAGES, () => expectSuccess("browser.extract", { url: `${origin}/page` })),
    rawLaunchPerPage: () =>
      sequentialRate(Math.max(2, Math.floor(PAGES / 4)), async () => {
        const browser = await chromium.launch(launchOptions);
        try {
          await rawExtract(browser);
        } finally {
          await browser.close();
        }
      }),
  };
  // Warm up: launches the skills' shared browser, JIT, Ajv.
  for (const run of Object.values(browserCases)) await run();
  const browserRates = await compareRates(browserCases, ROUNDS);

  const httpCases = {
    bareFetch: () =>
      sequentialRate(REQUESTS, async () => {
        const response = await fetch(`${origin}/json`);
        await response.json();
      }),
    skill: () => sequentialRate(REQUESTS, () => expectSuccess("http-request", { url: `${origin}/json` })),
  };
  for (const run of Object.values(httpCases)) await run();
  const httpRates = await compareRates(httpCases, ROUNDS);

  const perCall = (rate) => formatMs(1000 / rate);
  console.log(`built-in skills on loopback (loaded from plugins/: ${loaded.loaded.length} packages)`);
  printTable([
    ["case", "median per call", "vs baseline"],
    ["raw playwright, reused browser, new context", perCall(browserRates.rawReused), "1.00x (baseline)"],
    [
      "browser.extract via executor",
      perCall(browserRates.skill),
      `${(browserRates.rawReused / browserRates.skill).toFixed(2)}x`,
    ],
    [
      "raw playwright, launch per page",
      perCall(browserRates.rawLaunchPerPage),
      `${(browserRates.rawReused / browserRates.rawLaunchPerPage).toFixed(2)}x`,
    ],
    ["bare fetch", perCall(httpRates.bareFetch), "1.00x (baseline)"],
    [
      "http-request via executor",
      perCall(httpRates.skill),
      `${(httpRates.bareFetch / httpRates.skill).toFixed(2)}x`,
    ],
  ]);
  console.log(`  (medians of ${ROUNDS} interleaved rounds; audit trail on; no target, info only)`);
} finally {
  await rawBrowser.close();
  // The skills' shared Chromium lives on globalThis; any copy of the pool module closes it.
  await pool.closeBrowser();
  loaded.loader.close();
  await host.close();
  server.close();
  directory.cleanup();
}

// Skillbox Studio as a person meets it: a real `skillbox dev` on loopback and Debian's Chromium.
// (a) First load of the dashboard, each in a fresh browser context (nothing cached): bytes
//     transferred (Resource Timing `transferSize` of the document and every resource, headers
//     included) and the time from navigation start to the skills table's rows painted (the frame
//     after they enter the DOM). The floor is the same browser loading the server's `/health`.
// (b) The gzipped size of the build (packages/studio/dist/app, gzipped as the server sends it).
// (c) A table of 10,000 executions, seeded in process through the executor on the database file
//     `skillbox dev` then opens: one page of `GET /api/executions` over HTTP (first page and
//     offset 9,000) against the same page selected with raw better-sqlite3 (the baseline), and
//     the browser's time from `location.hash = "#/executions…"` to that page's rows painted.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { gzipSync, constants as zlibConstants } from "node:zlib";
import { createSkillHost } from "@skillbox/core";
import { chromium } from "playwright-core";
import { startSkillboxDev } from "../packages/studio/scripts/start-skillbox-dev.mjs";
import { formatMs, printTable, silentLogger, temporaryDirectory, verdict } from "./lib/fixtures.mjs";
import { median } from "./lib/measure.mjs";

const ROWS = Number(process.env.BENCH_STUDIO_ROWS ?? 10_000);
const DEEP_OFFSET = Math.max(0, Math.min(9_000, ROWS - 50));
const LOADS = Number(process.env.BENCH_STUDIO_LOADS ?? 7);
const REPEATS = Number(process.env.BENCH_STUDIO_REPEATS ?? 30);
const NAVIGATIONS = Number(process.env.BENCH_STUDIO_NAVIGATIONS ?? 10);
/** The page size the executions table asks for. */
const PAGE_SIZE = 50;
const SKILLS = 10;
/** One page of the API "stays responsive": well under a click's frame budget (as execution-page). */
const TARGET_PAGE_MS = 50;
const CHROMIUM = process.env.SKILLBOX_BROWSER_EXECUTABLE ?? "/usr/bin/chromium";
const BUILD = fileURLToPath(new URL("../packages/studio/dist/app/", import.meta.url));

const kilobytes = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/** (b): every built file, raw and gzipped at the level the server uses. */
function bundleSize() {
  const files = [
    join(BUILD, "index.html"),
    ...readdirSync(join(BUILD, "assets")).map((file) => join(BUILD, "assets", file)),
  ];
  let raw = 0;
  let gzipped = 0;
  for (const file of files) {
    const body = readFileSync(file);
    raw += body.byteLength;
    gzipped += gzipSync(body, { level: zlibConstants.Z_BEST_COMPRESSION }).byteLength;
  }
  return { files: files.length, raw, gzipped };
}

/** Seeds the table through the executor, and times the raw SQLite page on the same file. */
async function seed(database) {
  const host = createSkillHost({ database, logger: silentLogger() });
  host.executor.registerHandler("work", async (input) => {
    if (input.fail) throw new Error("asked to fail");
    return { done: input.index };
  });
  for (let index = 0; index < SKILLS; index++) {
    host.registry.register({ name: `seeded-${index}`, version: "1.0.0", handler: "work" });
  }
  const started = performance.now();
  for (let start = 0; start < ROWS; start += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, ROWS - start) }, (_, offset) => {
        const index = start + offset;
        return host.executor.execute(
          `seeded-${index % SKILLS}`,
          { index, fail: index % 10 === 0 },
          { sessionId: `session-${index % 7}` },
        );
      }),
    );
  }
  const seedMs = performance.now() - started;
  const raw = host.registry.database.prepare(
    `SELECT id, skill_name, skill_version, status, error_code, duration_ms, created_at
     FROM skill_executions WHERE api_key_id = ? ORDER BY rowid DESC LIMIT ${PAGE_SIZE} OFFSET ?`,
  );
  const rawFirst = await time(() => raw.all("public", 0));
  const rawDeep = await time(() => raw.all("public", DEEP_OFFSET));
  await host.close();
  return { seedMs, rawFirst, rawDeep };
}

/** Median of `REPEATS` runs of `operation` after three warm-ups. */
async function time(operation) {
  for (let warm = 0; warm < 3; warm++) await operation();
  const durations = [];
  for (let index = 0; index < REPEATS; index++) {
    const started = performance.now();
    await operation();
    durations.push(performance.now() - started);
  }
  return median(durations);
}

/** Records (in the page) when the first element matching `selector` is painted. */
function paintedAtScript(selector) {
  return `(() => {
    const seen = () => requestAnimationFrame(() => { window.__paintedAt = performance.now(); });
    const observer = new MutationObserver(() => {
      if (document.querySelector(${JSON.stringify(selector)}) === null) return;
      observer.disconnect();
      seen();
    });
    observer.observe(document, { childList: true, subtree: true });
  })();`;
}

/** (a): one cold load of `url` in a fresh context: ms to `selector` painted, bytes transferred. */
async function coldLoad(browser, url, selector) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    if (selector !== undefined) await page.addInitScript(paintedAtScript(selector));
    await page.goto(url, { waitUntil: "load" });
    if (selector !== undefined) await page.waitForFunction(() => window.__paintedAt !== undefined);
    return await page.evaluate(() => {
      const [navigation] = performance.getEntriesByType("navigation");
      const resources = performance.getEntriesByType("resource");
      const api = resources.filter((entry) => new URL(entry.name).pathname.startsWith("/api/"));
      const sum = (entries) => entries.reduce((total, entry) => total + entry.transferSize, 0);
      return {
        ms: window.__paintedAt ?? navigation.loadEventEnd,
        staticBytes: navigation.transferSize + sum(resources) - sum(api),
        apiBytes: sum(api),
        requests: resources.length + 1,
      };
    });
  } finally {
    await context.close();
  }
}

/** (c): from `location.hash = route` to the row of execution `id` painted, in the loaded dashboard. */
async function navigationToRow(page, route, id) {
  await page.evaluate(() => {
    location.hash = "#/skills";
  });
  await page.locator("tr[data-skill]").first().waitFor();
  return page.evaluate(
    ([target, selector]) =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        const timer = setTimeout(() => {
          observer.disconnect();
          reject(new Error(`no ${selector} within 20 s of ${target}`));
        }, 20_000);
        const observer = new MutationObserver(() => {
          if (document.querySelector(selector) === null) return;
          observer.disconnect();
          clearTimeout(timer);
          requestAnimationFrame(() => resolve(performance.now() - started));
        });
        observer.observe(document.body, { childList: true, subtree: true });
        location.hash = target;
      }),
    [route, `tr[data-execution-id="${id}"]`],
  );
}

const temporary = temporaryDirectory("skillbox-bench-studio");
let server;
let browser;
try {
  const bundle = bundleSize();
  const database = join(temporary.path, ".data", "skillbox.db");
  mkdirSync(join(temporary.path, ".data"), { recursive: true });
  // The tag in the folder's name lets cleanup() find jiti's cache entries of this run.
  const echo = join(temporary.path, "plugins", `${temporary.tag}-echo`);
  mkdirSync(echo, { recursive: true });
  writeFileSync(
    join(echo, "skill.json"),
    JSON.stringify({ name: "echo", version: "1.0.0", handler: "./index.ts", input: { type: "object" } }),
  );
  writeFileSync(join(echo, "index.ts"), "export default (input: unknown) => input;\n");
  const seeded = await seed(database);

  [server, browser] = await Promise.all([
    startSkillboxDev({ directory: temporary.path, database }),
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    }),
  ]);
  const { url } = server;

  // (a) First load, interleaved with the floor so noise hits both alike.
  await coldLoad(browser, `${url}/#/skills`, "tr[data-skill]");
  const floor = [];
  const studio = [];
  for (let round = 0; round < LOADS; round++) {
    floor.push(await coldLoad(browser, `${url}/health`));
    studio.push(await coldLoad(browser, `${url}/#/skills`, "tr[data-skill]"));
  }
  const medianOf = (loads, field) => median(loads.map((load) => load[field]));

  // (c) One page of the table, over HTTP and in the browser.
  const get = (path) => async () => {
    const response = await fetch(`${url}${path}`);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  };
  const firstPath = `/api/executions?limit=${PAGE_SIZE}`;
  const deepPath = `/api/executions?limit=${PAGE_SIZE}&offset=${DEEP_OFFSET}`;
  const firstPage = await get(firstPath)();
  const deepPage = await get(deepPath)();
  const health = await time(get("/health"));
  const apiFirst = await time(get(firstPath));
  const apiDeep = await time(get(deepPath));

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}/#/skills`);
  await page.locator("tr[data-skill]").first().waitFor();
  const browserCase = async (route, id) => {
    await navigationToRow(page, route, id);
    const samples = [];
    for (let index = 0; index < NAVIGATIONS; index++) samples.push(await navigationToRow(page, route, id));
    return median(samples);
  };
  const browserFirst = await browserCase("#/executions", firstPage.executions[0].id);
  let browserDeep;
  try {
    browserDeep = await browserCase(`#/executions?offset=${DEEP_OFFSET}`, deepPage.executions[0].id);
  } catch (error) {
    browserDeep = error instanceof Error ? error.message : String(error);
  }
  await context.close();

  console.log("Skillbox Studio on `skillbox dev`, loopback, headless Chromium");
  console.log(
    `  build: ${bundle.files} files, ${kilobytes(bundle.raw)} raw, ${kilobytes(bundle.gzipped)} gzipped (HTML + JS + CSS)`,
  );
  console.log(`first load, fresh browser context each (median of ${LOADS})`);
  printTable([
    ["case", "median time", "document + assets", "API answers", "requests"],
    [
      "floor: GET /health as a page, to load",
      formatMs(medianOf(floor, "ms")),
      kilobytes(medianOf(floor, "staticBytes")),
      "-",
      String(medianOf(floor, "requests")),
    ],
    [
      "Studio: navigation to skills rows painted",
      formatMs(medianOf(studio, "ms")),
      kilobytes(medianOf(studio, "staticBytes")),
      kilobytes(medianOf(studio, "apiBytes")),
      String(medianOf(studio, "requests")),
    ],
  ]);
  console.log(
    `one page (${PAGE_SIZE} rows) of a ${firstPage.total.toLocaleString("en-US")}-execution table (seeded through the executor in ${formatMs(seeded.seedMs)}; medians of ${REPEATS})`,
  );
  printTable([
    ["case", "median", "vs raw SQLite page"],
    ["raw better-sqlite3 page, offset 0 (baseline)", formatMs(seeded.rawFirst), "1.0x"],
    [`raw better-sqlite3 page, offset ${DEEP_OFFSET} (baseline)`, formatMs(seeded.rawDeep), "1.0x"],
    ["GET /health over HTTP (round-trip floor)", formatMs(health), "-"],
    ["GET /api/executions, first page", formatMs(apiFirst), `${(apiFirst / seeded.rawFirst).toFixed(1)}x`],
    [
      `GET /api/executions, offset ${DEEP_OFFSET}`,
      formatMs(apiDeep),
      `${(apiDeep / seeded.rawDeep).toFixed(1)}x`,
    ],
    [`browser: #/executions to rows painted (median of ${NAVIGATIONS})`, formatMs(browserFirst), "-"],
    [
      `browser: #/executions?offset=${DEEP_OFFSET} to rows painted`,
      typeof browserDeep === "number" ? formatMs(browserDeep) : `not measured: ${browserDeep}`,
      "-",
    ],
  ]);
  const slowest = Math.max(apiFirst, apiDeep);
  console.log(
    `  slowest API page = ${formatMs(slowest)} (target <= ${TARGET_PAGE_MS} ms) ${verdict(slowest <= TARGET_PAGE_MS)}; load and browser times: no target, info only`,
  );
} finally {
  await browser?.close();
  await server?.stop();
  temporary.cleanup();
}

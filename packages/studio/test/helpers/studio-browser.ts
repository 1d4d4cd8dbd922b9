import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`.ci/setup-browser.sh` installs it), or the one `SKILLBOX_BROWSER_EXECUTABLE` names. */
const EXECUTABLE = process.env.SKILLBOX_BROWSER_EXECUTABLE ?? "/usr/bin/chromium";

/** Launches headless Chromium; the caller closes it (`browser.close()` in afterAll). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: EXECUTABLE,
    headless: true,
    // Root in CI: Chromium's own sandbox needs a user namespace it may not get there.
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
}

/** Options of {@link openStudio}. */
export interface OpenStudioOptions {
  /** A Studio route such as `#/executions`; default the start page. */
  route?: string;
  /** Typed into the API-key prompt when the page asks for one. */
  apiKey?: string;
}

/**
 * Opens the Studio at `url` in a fresh browser context (its own session storage) and waits for
 * the dashboard's navigation or the API-key prompt, whichever the page shows. Failed
 * page scripts fail the test: they are collected and thrown by `assertNoPageErrors`.
 */
export async function openStudio(
  browser: Browser,
  url: string,
  options: OpenStudioOptions = {},
): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    // An API error answer (a 401 the page asks a key for, a 404 it explains) is logged by the
    // browser as a failed resource: expected. Everything else — CSP refusals too — is a bug.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      errors.push(message.text());
    }
  });
  pageErrors.set(page, errors);
  await page.goto(`${url}/${options.route ?? ""}`);
  if (options.apiKey !== undefined) {
    await page.getByLabel("API key").fill(options.apiKey);
    await page.getByRole("button", { name: "Open the Studio" }).click();
  }
  await page.getByRole("navigation", { name: "Studio" }).or(page.getByLabel("API key")).first().waitFor();
  return page;
}

const pageErrors = new WeakMap<Page, string[]>();

/** Throws when a page opened by {@link openStudio} logged an error or threw (CSP violations included). */
export function assertNoPageErrors(page: Page): void {
  const errors = pageErrors.get(page) ?? [];
  if (errors.length > 0) throw new Error(`The Studio page reported errors:\n${errors.join("\n")}`);
}

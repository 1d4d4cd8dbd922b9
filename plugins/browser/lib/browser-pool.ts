import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { type HostLifecycle, SkillboxError } from "@skillbox/core/handler";
import { type Browser, type BrowserContext, chromium, type LaunchOptions } from "playwright-core";

/**
 * Flags Chromium needs here: `--no-sandbox` because hosts often run as root (Chromium refuses its
 * sandbox then), and the `--disable-*` ones stop its background traffic (component updates,
 * sync, QUIC, Google host lookups at start) that a closed network refuses, slowly, many at a time.
 */
const CHROMIUM_ARGUMENTS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The state shared by every copy of this module (each member imports it, hot reload re-imports it). */
interface BrowserPoolState {
  /** One launch (pending or done) per executable path; normally exactly one entry. */
  browsers: Map<string, Promise<Browser>>;
  /** Contexts opened by executions and not yet closed. */
  contexts: Set<BrowserContext>;
  /** How many browsers were launched in this process (reuse shows as 1). */
  launches: number;
  /**
   * The hosts whose executions used the pool and have not closed yet. The last one to close
   * closes the browsers: an open browser keeps the process alive, one host's close must not take
   * it from another host still running.
   */
  hosts: Set<HostLifecycle>;
}

const STATE_KEY = Symbol.for("skillbox.browser");

function poolState(): BrowserPoolState {
  const holder = globalThis as { [STATE_KEY]?: BrowserPoolState };
  holder[STATE_KEY] ??= { browsers: new Map(), contexts: new Set(), launches: 0, hosts: new Set() };
  // A copy of the module from before `hosts` existed may have created the state.
  holder[STATE_KEY].hosts ??= new Set();
  return holder[STATE_KEY];
}

async function assertExecutable(executablePath: string): Promise<void> {
  try {
    await access(executablePath, constants.X_OK);
  } catch {
    throw new SkillboxError(
      "BROWSER_UNAVAILABLE",
      `browser: no executable Chromium at ${JSON.stringify(executablePath)}; install it (\`apt-get install chromium\`) or set SKILLBOX_BROWSER_EXECUTABLE (the \`executablePath\` setting) to a Chromium or Chrome binary`,
      { data: { executablePath } },
    );
  }
}

/**
 * How the pool launches Chromium. Playwright's own SIGINT/SIGTERM/SIGHUP handlers are off: they
 * would swallow the signal (the host would close the browser and keep running). Without them a
 * normal exit runs Playwright's `exit` hook, which kills the browser's process group, and when the
 * host dies of a signal Chromium exits by itself as its control pipe closes (both tested).
 */
export function browserLaunchOptions(executablePath: string): LaunchOptions {
  return {
    executablePath,
    headless: true,
    args: [...CHROMIUM_ARGUMENTS],
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  };
}

async function launch(executablePath: string): Promise<Browser> {
  await assertExecutable(executablePath);
  try {
    return await chromium.launch(browserLaunchOptions(executablePath));
  } catch (error) {
    throw new SkillboxError(
      "BROWSER_UNAVAILABLE",
      `browser: Chromium at ${JSON.stringify(executablePath)} failed to start (${(error as Error).message.split("\n")[0]}); check that it runs (\`${executablePath} --version\`) or set SKILLBOX_BROWSER_EXECUTABLE`,
      { data: { executablePath }, cause: error, retryable: true },
    );
  }
}

/**
 * Returns the process's browser for `executablePath`, launching it on first use and again when it
 * crashed or was closed. Concurrent callers share one launch. With `host` (the execution's
 * `ctx.hostLifecycle`), the pool stays open while that host runs and closes when the last host
 * that used it closes, so the process can exit.
 */
export async function acquireBrowser(executablePath: string, host?: HostLifecycle): Promise<Browser> {
  const browser = await sharedBrowser(executablePath);
  // Held only once the browser is there: a host that closed already releases it at once, and
  // that must close this very browser rather than run before a launch nobody would close.
  if (host !== undefined) holdFor(host);
  return browser;
}

/** Registers `host` as a user of the pool, once per host; its close releases it. */
function holdFor(host: HostLifecycle): void {
  const state = poolState();
  if (state.hosts.has(host)) return;
  state.hosts.add(host);
  host.onClose(async () => {
    state.hosts.delete(host);
    if (state.hosts.size === 0) await closeBrowser();
  });
}

async function sharedBrowser(executablePath: string): Promise<Browser> {
  const state = poolState();
  const pending = state.browsers.get(executablePath);
  if (pending !== undefined) {
    const browser = await pending.catch(() => undefined);
    if (browser?.isConnected()) return browser;
    // A failed launch or a dead browser: forget it (unless someone already replaced it) and relaunch.
    if (state.browsers.get(executablePath) === pending) state.browsers.delete(executablePath);
    return sharedBrowser(executablePath);
  }
  const launching = launch(executablePath);
  state.browsers.set(executablePath, launching);
  try {
    const browser = await launching;
    state.launches += 1;
    browser.once("disconnected", () => {
      if (state.browsers.get(executablePath) === launching) state.browsers.delete(executablePath);
    });
    return browser;
  } catch (error) {
    if (state.browsers.get(executablePath) === launching) state.browsers.delete(executablePath);
    throw error;
  }
}

/** Records a context opened by an execution, so {@link browserPoolStatus} can count it. */
export function trackContext(context: BrowserContext): void {
  const state = poolState();
  state.contexts.add(context);
  context.once("close", () => state.contexts.delete(context));
}

/** What the pool holds right now (for tests, health checks and metrics). */
export interface BrowserPoolStatus {
  /** Browsers running or being launched. */
  browsers: number;
  /** Execution contexts not yet closed. */
  openContexts: number;
  /** Successful launches since the process started; stays at 1 while the browser is reused. */
  launches: number;
  /** Hosts that used the pool and have not closed; the last one's close closes the browsers. */
  hosts: number;
}

/** Counts the pool's browsers, open contexts and launches. */
export function browserPoolStatus(): BrowserPoolStatus {
  const state = poolState();
  return {
    browsers: state.browsers.size,
    openContexts: state.contexts.size,
    launches: state.launches,
    hosts: state.hosts.size,
  };
}

/**
 * Closes every browser of the pool (open contexts with them); the next execution launches a new
 * one. Runs by itself when the last host that used the pool closes (an open browser would keep
 * the process alive); call it directly in tests or where browsers were acquired without a host.
 * A process that exits anyway needs no call: Playwright kills the browser's process group from
 * its `exit` hook.
 */
export async function closeBrowser(): Promise<void> {
  const state = poolState();
  const pending = [...state.browsers.values()];
  state.browsers.clear();
  await Promise.all(
    pending.map(async (launching) => {
      const browser = await launching.catch(() => undefined);
      await browser?.close().catch(() => undefined);
    }),
  );
  state.contexts.clear();
}

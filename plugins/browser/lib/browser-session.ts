import { type HostLifecycle, SkillboxError } from "@skillbox/core/handler";
import type { BrowserContext, Page, Request } from "playwright-core";
import { startAllowlistProxy } from "./allowlist-proxy.js";
import { acquireBrowser, trackContext } from "./browser-pool.js";
import type { ResolvedBrowserSettings } from "./browser-settings.js";

/** One execution's isolated browser state: its own context (cookies, storage, cache) and page. */
export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** How many of the page's requests (and WebSockets) the host allowlist or the address check refused. */
  blockedRequests: number;
  /** The first top-level navigation to a refused host (a redirect, a script, a click on a link). */
  blockedNavigation: string | undefined;
  /** Origins (`http://host:port`) the proxy refused for a non-public address (SKILLBOX_BROWSER_ALLOW_PRIVATE). */
  refusedAddressOrigins: Set<string>;
}

/** How {@link withBrowserSession} sets up the session. */
export interface BrowserSessionOptions {
  settings: ResolvedBrowserSettings;
  /** The execution's signal: aborting it closes the context at once, stopping all page work. */
  signal: AbortSignal;
  viewport?: { width: number; height: number };
  /** The execution's `ctx.hostLifecycle`: the shared browser closes when the last host using it closes. */
  hostLifecycle?: HostLifecycle;
}

/**
 * WebRTC can reach any address without going through the proxy, so pages do not get it. The
 * string runs in every frame before the page's own scripts.
 */
const DISABLE_WEBRTC = `for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel"]) {
  try { delete globalThis[name]; } catch {}
}`;

/** Whether `request` navigates the page's main frame (not a frame's, a sub-resource or a fetch). */
export function isTopLevelNavigation(request: Request): boolean {
  try {
    return request.isNavigationRequest() && request.frame().parentFrame() === null;
  } catch {
    // Requests without a frame (workers) are never top-level navigations.
    return false;
  }
}

/**
 * Counts the page's requests the proxy will refuse (it applies the same allowlist), and notes a
 * refused top-level navigation. Counting here rather than in the proxy leaves out Chromium's own
 * background requests (autofill queries to Google, for one), which the proxy refuses as well.
 */
function watchRefusals(session: BrowserSession, settings: ResolvedBrowserSettings): void {
  session.context.on("request", (request) => {
    // blob: and similar stay inside the browser; only network requests reach the proxy.
    if (!/^https?:/i.test(request.url()) || settings.allowlist.allows(request.url())) return;
    session.blockedRequests += 1;
    if (isTopLevelNavigation(request)) session.blockedNavigation ??= request.url();
  });
  session.page.on("websocket", (webSocket) => {
    if (!settings.allowlist.allows(webSocket.url().replace(/^ws/i, "http"))) session.blockedRequests += 1;
  });
}

/** The error for an aborted signal: the executor's TIMEOUT/CANCELLED error it aborted with. */
function abortError(signal: AbortSignal): unknown {
  return signal.reason instanceof Error
    ? signal.reason
    : new SkillboxError("CANCELLED", "browser: the execution was cancelled");
}

/**
 * Runs `work` in a fresh BrowserContext of the shared browser, whose traffic all goes through an
 * allowlist proxy of its own (so nothing, not even a redirect hop, reaches another host). The
 * context is closed when `work` settles and, at once, when `signal` aborts, so a timed-out or
 * cancelled execution stops loading, running scripts and holding memory. After an abort this
 * rejects with the signal's reason.
 */
export async function withBrowserSession<T>(
  options: BrowserSessionOptions,
  work: (session: BrowserSession) => Promise<T>,
): Promise<T> {
  const { signal, settings } = options;
  if (signal.aborted) throw abortError(signal);
  const browser = await acquireBrowser(settings.executablePath, options.hostLifecycle);
  if (signal.aborted) throw abortError(signal);
  const refusedAddressOrigins = new Set<string>();
  let current: BrowserSession | undefined;
  const proxy = await startAllowlistProxy({
    allowlist: settings.allowlist,
    addressPolicy: settings.addressPolicy,
    onRefused: (url, reason) => {
      if (reason !== "address") return; // allowlist refusals are counted from the page's requests
      refusedAddressOrigins.add(new URL(url).origin);
      if (current !== undefined) current.blockedRequests += 1;
    },
  });
  let context: BrowserContext | undefined;
  const closeContext = () => context?.close().catch(() => undefined);
  signal.addEventListener("abort", closeContext, { once: true });
  try {
    context = await browser.newContext({
      viewport: options.viewport ?? { width: 1280, height: 720 },
      // No bypass list: Playwright then sends loopback through the proxy too.
      proxy: { server: proxy.server },
      // Service workers and downloads are not needed to read pages and only widen what a page can do.
      serviceWorkers: "block",
      acceptDownloads: false,
    });
    trackContext(context);
    if (signal.aborted) throw abortError(signal);
    await context.addInitScript(DISABLE_WEBRTC);
    const page = await context.newPage();
    const session: BrowserSession = {
      context,
      page,
      blockedRequests: 0,
      blockedNavigation: undefined,
      refusedAddressOrigins,
    };
    current = session;
    watchRefusals(session, settings);
    return await work(session);
  } catch (error) {
    if (signal.aborted) throw abortError(signal);
    throw error;
  } finally {
    signal.removeEventListener("abort", closeContext);
    await closeContext();
    await proxy.close();
  }
}

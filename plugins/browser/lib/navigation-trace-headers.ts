import type { Page } from "playwright-core";
import { isTopLevelNavigation } from "./browser-session.js";

/**
 * Sends `traceHeaders` (the execution's W3C trace context, `ctx.traceHeaders()`) on the page's
 * top-level navigations to the origin of `url` — the page the skill opens, and later same-origin
 * navigations of the main frame (a submitted form, a clicked link) — and on no other request.
 *
 * Why a `page.route` on that origin: the navigation is the request the caller asked for, so the
 * site may join the trace there; sub-resources and frames are the page's own doing, and the third
 * parties among them (analytics, CDNs) must not learn the trace ids. `page.setExtraHTTPHeaders`
 * would send them on every request of the page, and the allowlist proxy cannot add headers to
 * HTTPS, which it only tunnels. Playwright
 * keeps header overrides on the redirects a request starts, so a redirect of the navigation
 * carries them as well: it is still the navigation the caller asked for, and the headers hold ids,
 * no secret. Untraced (`{}`), no route is installed, so pages load as they always did.
 */
export async function sendTraceHeadersOnNavigation(
  page: Page,
  url: string,
  traceHeaders: Record<string, string>,
): Promise<void> {
  if (Object.keys(traceHeaders).length === 0) return;
  const origin = new URL(url).origin;
  await page.route(
    (candidate) => candidate.origin === origin,
    async (route, request) => {
      if (!isTopLevelNavigation(request)) {
        await route.fallback();
        return;
      }
      // The override replaces the request's headers, so it starts from them (cookies and the
      // other forbidden headers Playwright keeps by itself).
      await route.continue({ headers: { ...request.headers(), ...traceHeaders } });
    },
  );
}

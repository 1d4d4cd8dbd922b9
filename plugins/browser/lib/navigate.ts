import {
  type AddressRefusal,
  AddressRefusedError,
  createGuardedLookup,
  parseIpLiteral,
  SkillboxError,
} from "@skillbox/core/handler";
import type { BrowserSession } from "./browser-session.js";
import type { ResolvedBrowserSettings } from "./browser-settings.js";

/** When a navigation counts as done (Playwright's `waitUntil`). */
export type WaitUntil = "load" | "domcontentloaded" | "networkidle";

const ALLOWLIST_FIX =
  "add the host to SKILLBOX_BROWSER_ALLOWED_HOSTS (the `allowedHosts` setting), e.g. `example.com,*.example.com,127.0.0.1:8080`, or `*` for any host";

const PRIVATE_FIX =
  "list the host or its address in SKILLBOX_BROWSER_ALLOW_PRIVATE (the `allowPrivate` setting), e.g. `127.0.0.1` or `10.0.0.0/8`, to allow it";

function hostOf(url: URL): string {
  return url.port === "" ? url.hostname : `${url.hostname}:${url.port}`;
}

/**
 * Checks a URL before the browser goes there: http or https only (no `file:`, `data:`,
 * `javascript:`, `chrome:` …), and a host the allowlist permits. Throws `URL_REFUSED` naming the
 * URL, the reason and the fix; `INPUT_INVALID` when it is not a URL at all.
 */
export function assertAllowedUrl(skillName: string, rawUrl: string, settings: ResolvedBrowserSettings): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${skillName}: \`url\` ${JSON.stringify(rawUrl)} is not an absolute URL; pass one such as "https://example.com/"`,
      { data: { url: rawUrl } },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SkillboxError(
      "URL_REFUSED",
      `${skillName}: only http and https URLs can be opened, got ${JSON.stringify(url.protocol)} in ${JSON.stringify(rawUrl)}`,
      { data: { url: rawUrl, reason: "scheme" } },
    );
  }
  if (settings.allowlist.patterns.length === 0) {
    throw new SkillboxError(
      "URL_REFUSED",
      `${skillName}: no host is allowed yet, so ${JSON.stringify(rawUrl)} is refused; ${ALLOWLIST_FIX}`,
      { data: { url: rawUrl, host: hostOf(url), reason: "no-allowlist" } },
    );
  }
  if (!settings.allowlist.allows(url)) {
    throw new SkillboxError(
      "URL_REFUSED",
      `${skillName}: host ${JSON.stringify(hostOf(url))} of ${JSON.stringify(rawUrl)} is not in the allowlist (${settings.allowlist.patterns.join(", ")}); ${ALLOWLIST_FIX}`,
      { data: { url: rawUrl, host: hostOf(url), reason: "host" } },
    );
  }
  return url;
}

/** The refusal for the first of `url`'s addresses the policy refuses; `undefined` when all may be reached. */
async function addressRefusal(
  url: URL,
  settings: ResolvedBrowserSettings,
): Promise<AddressRefusal | undefined> {
  const policy = settings.addressPolicy;
  const host = url.hostname;
  if (parseIpLiteral(host) !== undefined) return policy.checkLiteral(host);
  // The proxy's own check, ahead of time; a name that does not resolve fails in the browser as
  // any other unreachable host would.
  return new Promise((resolve) => {
    createGuardedLookup(policy)(host, { all: true }, (error) => {
      resolve(error instanceof AddressRefusedError ? error.refusal : undefined);
    });
  });
}

/**
 * Throws `URL_REFUSED` when `url`'s host is, or resolves to, a loopback, private, link-local or
 * other non-public address not listed in `allowPrivate`, whatever the allowlist says (`*`
 * included). The proxy enforces the same for every request and redirect hop; this check gives
 * the top-level URL a clear error instead of a refusal page.
 */
async function assertReachableAddress(
  skillName: string,
  rawUrl: string,
  settings: ResolvedBrowserSettings,
): Promise<void> {
  const url = new URL(rawUrl);
  const refusal = await addressRefusal(url, settings);
  if (refusal === undefined) return;
  throw new SkillboxError(
    "URL_REFUSED",
    `${skillName}: ${JSON.stringify(rawUrl)} leads to ${refusal.address} (${refusal.range}), which is not a public address, so it is refused; ${PRIVATE_FIX}`,
    {
      data: {
        url: rawUrl,
        host: hostOf(url),
        address: refusal.address,
        range: refusal.range,
        reason: "private-address",
      },
    },
  );
}

/**
 * The page's URL when it is an http(s) URL the allowlist refuses (a navigation the guard did not
 * see); other schemes (`about:blank`, Chromium's error page) are not places a page can load from.
 */
function outsideAllowlist(pageUrl: string, settings: ResolvedBrowserSettings): string | undefined {
  if (!/^https?:/i.test(pageUrl)) return undefined;
  return settings.allowlist.allows(pageUrl) ? undefined : pageUrl;
}

/**
 * Throws `URL_REFUSED` when the page went (or tried to go) to a host outside the allowlist: a
 * redirect, a script setting `location`, a click on a link. The guard already aborted that
 * request; this turns it into the execution's outcome instead of an error page.
 */
export function assertNoRefusedNavigation(
  skillName: string,
  session: BrowserSession,
  settings: ResolvedBrowserSettings,
): void {
  const pageUrl = session.page.url();
  if (/^https?:/i.test(pageUrl) && session.refusedAddressOrigins.has(new URL(pageUrl).origin)) {
    throw new SkillboxError(
      "URL_REFUSED",
      `${skillName}: the page went to ${JSON.stringify(pageUrl)}, whose address is not public, so it was stopped; ${PRIVATE_FIX}`,
      { data: { url: pageUrl, host: hostOf(new URL(pageUrl)), reason: "private-address" } },
    );
  }
  const refused = session.blockedNavigation ?? outsideAllowlist(pageUrl, settings);
  if (refused === undefined) return;
  let host = refused;
  try {
    host = hostOf(new URL(refused));
  } catch {
    // Keep the raw text: it is only used in the message.
  }
  throw new SkillboxError(
    "URL_REFUSED",
    `${skillName}: the page navigated to ${JSON.stringify(refused)}, whose host ${JSON.stringify(host)} is not allowed, so it was stopped; ${ALLOWLIST_FIX}`,
    { data: { url: refused, host, reason: "navigation" } },
  );
}

/**
 * Opens `url` in the session's page and returns the main response's HTTP status (`null` when
 * there was none). No Playwright timeout applies: the execution's signal bounds it. A refused
 * host, non-public address or redirect is `URL_REFUSED`; a network failure is a retryable `UPSTREAM_ERROR`.
 */
export async function navigate(
  skillName: string,
  session: BrowserSession,
  url: string,
  waitUntil: WaitUntil,
  settings: ResolvedBrowserSettings,
): Promise<number | null> {
  assertAllowedUrl(skillName, url, settings);
  await assertReachableAddress(skillName, url, settings);
  let status: number | null;
  try {
    const response = await session.page.goto(url, { waitUntil, timeout: 0 });
    status = response?.status() ?? null;
  } catch (error) {
    assertNoRefusedNavigation(skillName, session, settings);
    const reason = (error as Error).message.split("\n")[0];
    throw new SkillboxError(
      "UPSTREAM_ERROR",
      `${skillName}: loading ${JSON.stringify(url)} failed: ${reason}`,
      {
        data: { url },
        cause: error,
        retryable: true,
      },
    );
  }
  assertNoRefusedNavigation(skillName, session, settings);
  return status;
}

import {
  type AddressPolicy,
  type AddressRefusal,
  parseIpLiteral,
  SkillboxError,
} from "@skillbox/core/handler";
import { HTTP_REQUEST_ENVIRONMENT } from "./http-request-settings.js";

const SCHEMES = new Set(["http:", "https:"]);

/** The `URL_REFUSED` error for an address the SSRF guard blocked, naming the host, the range and the setting that allows it. */
export function addressRefused(refusal: AddressRefusal): SkillboxError {
  const { host, address, range } = refusal;
  const isLiteral = parseIpLiteral(host) !== undefined;
  const through = host === address ? "" : isLiteral ? ` (written ${host})` : ` (the address of ${host})`;
  const names = isLiteral ? `"${address}"` : `"${address}", "${host}"`;
  return new SkillboxError(
    "URL_REFUSED",
    `http-request: refused ${address}${through}: it is in the ${range} range, and requests to private, ` +
      `loopback and link-local addresses are blocked to prevent SSRF; to allow it, add ${names} or a CIDR ` +
      `range containing it to ${HTTP_REQUEST_ENVIRONMENT.allowPrivate}`,
    { data: { host, address, range, setting: HTTP_REQUEST_ENVIRONMENT.allowPrivate } },
  );
}

/**
 * Refuses what can be refused from the URL alone, before any connection: a scheme other than http(s),
 * credentials in the URL, and IP literals in non-public ranges. The URL parser has already turned
 * `2130706433`, `0x7f.1` and `[::ffff:7f00:1]` into canonical addresses, so these are caught too.
 * Host names are checked when they are resolved, at connect time.
 */
export function assertUrlAllowed(url: URL, policy: AddressPolicy, redirectedFrom?: URL): void {
  const origin = redirectedFrom === undefined ? "" : ` (redirected from ${redirectedFrom.origin})`;
  if (!SCHEMES.has(url.protocol)) {
    throw new SkillboxError(
      "URL_REFUSED",
      `http-request: refused ${url.protocol} URL${origin}: only http: and https: URLs can be requested`,
      { data: { scheme: url.protocol } },
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new SkillboxError(
      "URL_REFUSED",
      `http-request: refused a URL with credentials for ${url.host}${origin}: send them in an Authorization ` +
        `header instead (forwarded only when ${HTTP_REQUEST_ENVIRONMENT.forwardHeaders} lists authorization)`,
      { data: { host: url.host } },
    );
  }
  const refusal = policy.checkLiteral(url.hostname);
  if (refusal) throw addressRefused(refusal);
}

import { SkillboxError, type SkillContext } from "@skillbox/core/handler";
import { A2A_ENVIRONMENT, type A2aSettings } from "./a2a-settings.js";
import { type HostPattern, parseHostPattern } from "./host-pattern.js";

/**
 * The `fetch` the A2A client uses, so every request it makes — the agent card, then the JSON-RPC
 * endpoint the card names, which may be on another host — goes through the same checks:
 *
 * - only `http:` and `https:` URLs whose host matches `allowedHosts`, else `URL_REFUSED`;
 * - the configured headers of the matching host patterns are added (credentials stay out of the
 *   skill's input, so they never reach the audit trail);
 * - redirects are not followed (a redirect could leave the allowlist): `UPSTREAM_ERROR`;
 * - a response larger than `maxResponseBytes` fails with `SIZE_LIMIT_EXCEEDED`;
 * - a request without a signal of its own gets the execution's signal (the card resolver passes none);
 * - the execution's W3C trace context (`ctx.traceHeaders()`, read at each request) is added, so the
 *   agent's spans join the execution's trace, unless a `traceparent` is set already.
 */
export function createGuardedFetch(
  settings: A2aSettings,
  context: Pick<SkillContext, "signal" | "traceHeaders">,
): typeof fetch {
  const allowed = allowedPatterns(settings);
  const headerRules = Object.entries(settings.headers).flatMap(([pattern, headers]) => {
    const parsed = parseHostPattern(pattern);
    return parsed === undefined ? [] : [{ pattern: parsed, headers }];
  });
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    checkUrl(url, allowed);
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    for (const [name, value] of new Headers(init?.headers)) headers.set(name, value);
    for (const rule of headerRules.filter((candidate) => candidate.pattern.matches(url))) {
      for (const [name, value] of Object.entries(rule.headers)) headers.set(name, value);
    }
    if (!headers.has("traceparent")) {
      for (const [name, value] of Object.entries(context.traceHeaders())) headers.set(name, value);
    }
    const response = await fetch(input instanceof Request ? input : url, {
      ...init,
      headers,
      redirect: "manual",
      signal: init?.signal ?? context.signal,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new SkillboxError(
        "UPSTREAM_ERROR",
        `${url.origin}${url.pathname} redirects (HTTP ${response.status}) to ${response.headers.get("location") ?? "nowhere"}; ` +
          "redirects are not followed: use the final URL as agentUrl (its host must be allowed too)",
        { data: { status: response.status, url: url.href }, retryable: false },
      );
    }
    return limitBody(response, settings.maxResponseBytes, url);
  };
}

/** Refuses (`URL_REFUSED`) a URL that is not http(s) or whose host is not in `settings.allowedHosts`. */
export function checkAgentUrl(url: URL, settings: A2aSettings): void {
  checkUrl(url, allowedPatterns(settings));
}

function allowedPatterns(settings: A2aSettings): HostPattern[] {
  return settings.allowedHosts.flatMap((entry) => parseHostPattern(entry) ?? []);
}

function checkUrl(url: URL, allowed: HostPattern[]): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SkillboxError(
      "URL_REFUSED",
      `${url.href} is not an http:// or https:// URL; A2A agents are reached over HTTP(S)`,
      {
        data: { url: url.href },
      },
    );
  }
  if (allowed.some((pattern) => pattern.matches(url))) return;
  throw new SkillboxError(
    "URL_REFUSED",
    allowed.length === 0
      ? `No A2A agent hosts are allowed, so ${url.host} is refused; set ${A2A_ENVIRONMENT.allowedHosts} to the ` +
          `agents' host[:port] patterns (comma-separated, * allows any), e.g. ${A2A_ENVIRONMENT.allowedHosts}=${url.host}`
      : `${url.host} is not in ${A2A_ENVIRONMENT.allowedHosts} (${allowed.map((pattern) => pattern.text).join(", ")}); ` +
          "add it to reach this agent",
    { data: { host: url.host, url: url.href } },
  );
}

function limitBody(response: Response, maxBytes: number, url: URL): Response {
  const tooLarge = () =>
    new SkillboxError(
      "SIZE_LIMIT_EXCEEDED",
      `The answer of ${url.origin}${url.pathname} is larger than ${maxBytes} bytes; raise ${A2A_ENVIRONMENT.maxResponseBytes} to accept it`,
      { data: { limit: maxBytes, url: url.href } },
    );
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    void response.body?.cancel();
    throw tooLarge();
  }
  if (response.body === null) return response;
  let received = 0;
  const limited = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(limited, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

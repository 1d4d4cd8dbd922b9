import { SkillboxError, type SkillLogger } from "@skillbox/core/handler";
import { etagCacheKey, type GithubEtagCache, githubEtagCache } from "./etag-cache.js";
import {
  type FailedRequest,
  githubMessageOf,
  rateLimitedError,
  statusError,
  unreachableError,
  withoutSecret,
} from "./github-errors.js";
import type { GithubSettings } from "./github-settings.js";
import { nextLinkOf } from "./link-header.js";
import { type RateLimitAnswer, rateLimitOf } from "./rate-limit.js";
import { discardBody, pause, readBodyText } from "./read-body.js";

/** Query parameters; `undefined` values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** Where a client's requests run. */
export interface GithubClientContext {
  /** The execution's signal: aborts requests and rate-limit waits on timeout or cancellation. */
  signal: AbortSignal;
  logger: SkillLogger;
  /** Epoch ms when the execution will be cut off; a rate-limit wait ending later fails at once instead. */
  deadline?: number;
  /** The execution's `ctx.traceHeaders()`: the W3C trace context every request carries (`{}` untraced). */
  traceHeaders(): Record<string, string>;
}

/** A successful answer (a 304 is served from the cache as the 200 it confirms). */
export interface GithubAnswer {
  status: number;
  /** Parsed JSON, or `null` for an empty body (204, some 202s). */
  body: unknown;
  link: string | null;
  url: string;
  fromCache: boolean;
}

/** A list collected over `Link` pages. */
export interface CollectedPages {
  items: unknown[];
  /** True when GitHub had more items than the limit let through. */
  truncated: boolean;
}

/** Options of {@link GithubClient.collect}. */
export interface CollectOptions {
  limit: number;
  /** Items to drop (pull requests in the issues list, drafts in releases) — they do not count against the limit. */
  keep?: (item: unknown) => boolean;
}

/** Several rate-limit waits in a row mean the limit is not lifting; stop and say so. */
const MAX_RATE_LIMIT_WAITS = 3;
const MAX_REDIRECTS = 3;
/** 10 pages hold the largest limit (1000); more only when items are filtered out. */
const MAX_PAGES = 50;

/**
 * A small GitHub REST client for one execution: GitHub's headers, the execution's trace context,
 * the token only when set, ETag revalidation against the shared cache, `Link` pagination,
 * rate-limit waits and clear errors. It never follows a link or redirect outside the API base, so
 * the token goes nowhere else.
 */
export class GithubClient {
  private readonly base: URL;

  constructor(
    private readonly settings: GithubSettings,
    private readonly context: GithubClientContext,
    private readonly cache: GithubEtagCache = githubEtagCache(),
  ) {
    this.base = new URL(settings.apiUrl);
  }

  /** GETs `path` (relative to the API base, starting with `/`). */
  async get(path: string, query: Query, subject: string): Promise<GithubAnswer> {
    return this.fetchUrl(this.urlOf(path, query), subject);
  }

  /** GETs `path` and follows `rel="next"` links until `limit` items are collected or the pages run out. */
  async collect(
    path: string,
    query: Query,
    subject: string,
    options: CollectOptions,
  ): Promise<CollectedPages> {
    // Filtered lists lose items on every page, so they always ask for full pages.
    const perPage = options.keep === undefined ? Math.min(100, options.limit) : 100;
    let url = this.urlOf(path, { ...query, per_page: perPage });
    const items: unknown[] = [];
    for (let page = 1; ; page++) {
      const answer = await this.fetchUrl(url, subject);
      if (answer.body === null) return { items, truncated: false };
      if (!Array.isArray(answer.body)) {
        throw new SkillboxError(
          "UPSTREAM_ERROR",
          `GitHub answered GET ${answer.url} with something other than a list`,
          {
            retryable: false,
            data: { url: answer.url },
          },
        );
      }
      const kept = options.keep === undefined ? answer.body : answer.body.filter(options.keep);
      const room = options.limit - items.length;
      items.push(...kept.slice(0, room));
      const next = nextLinkOf(answer.link);
      if (kept.length > room) return { items, truncated: true };
      if (next === undefined) return { items, truncated: false };
      if (items.length === options.limit || page >= MAX_PAGES) return { items, truncated: true };
      url = this.insideApi(new URL(next, answer.url), "`Link` header's next page");
    }
  }

  private urlOf(path: string, query: Query): URL {
    const url = new URL(`${this.settings.apiUrl}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  /** Refuses URLs outside the configured API (another origin, or outside its path on Enterprise). */
  private insideApi(url: URL, what: string): URL {
    const basePath = this.base.pathname.replace(/\/+$/, "");
    const samePath = basePath === "" || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
    if (url.origin === this.base.origin && samePath) return url;
    throw new SkillboxError(
      "URL_REFUSED",
      `GitHub's ${what} points to ${url.origin}${url.pathname}, outside the API base ${this.settings.apiUrl}; refusing to follow it so the token never leaves SKILLBOX_GITHUB_API_URL`,
      { data: { origin: url.origin, apiUrl: this.settings.apiUrl } },
    );
  }

  private async fetchUrl(requested: URL, subject: string): Promise<GithubAnswer> {
    const cacheKey = etagCacheKey(requested.href, this.settings.token);
    const cached = this.cache.get(cacheKey);
    const request = this.describe(requested, subject);
    let url = requested;
    let waits = 0;
    for (let redirects = 0; ; ) {
      const response = await this.send(url, cached?.etag);
      if (response.status === 304 && cached !== undefined) {
        await discardBody(response);
        this.context.logger.debug("github cache hit", { url: url.href });
        return {
          status: 200,
          // Parsed as the 200 it confirms was: an empty body is null, not a JSON syntax error.
          body: this.parseBody(cached.bodyText, url, 200),
          link: cached.link,
          url: url.href,
          fromCache: true,
        };
      }
      const location = response.headers.get("location");
      if ([301, 302, 307, 308].includes(response.status) && location !== null) {
        await discardBody(response);
        if (++redirects > MAX_REDIRECTS) {
          throw new SkillboxError(
            "UPSTREAM_ERROR",
            `GET ${requested.href} redirected more than ${MAX_REDIRECTS} times`,
            {
              retryable: false,
              data: { url: requested.href },
            },
          );
        }
        url = this.insideApi(new URL(location, url), "redirect");
        continue;
      }
      const text = await this.readText(response, url);
      if (response.ok) return this.accept(response, text, url, cacheKey);
      const message = this.redact(githubMessageOf(text));
      const limit = rateLimitOf(response.status, response.headers, message);
      if (limit === undefined) throw statusError(response.status, message, { ...request, url: url.href });
      await this.waitOut(limit, request, ++waits);
    }
  }

  private describe(url: URL, subject: string): FailedRequest {
    return {
      url: url.href,
      subject,
      hasToken: this.settings.token !== undefined,
      rateLimitMaxWaitMs: this.settings.rateLimitMaxWaitMs,
    };
  }

  private async send(url: URL, etag: string | undefined): Promise<Response> {
    const headers: Record<string, string> = {
      // Read per request: it is the span under way when this request goes out that the trace names.
      ...this.context.traceHeaders(),
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      "user-agent": this.settings.userAgent,
    };
    if (this.settings.token !== undefined) headers.authorization = `Bearer ${this.settings.token}`;
    if (etag !== undefined) headers["if-none-match"] = etag;
    this.context.logger.debug("github request", {
      method: "GET",
      url: url.href,
      conditional: etag !== undefined,
    });
    try {
      // Redirects are followed by hand so each hop is checked against the API base first.
      return await fetch(url, { headers, signal: this.context.signal, redirect: "manual" });
    } catch (error) {
      if (this.context.signal.aborted) throw this.context.signal.reason;
      throw unreachableError(url.href, error);
    }
  }

  private async readText(response: Response, url: URL): Promise<string> {
    try {
      return await readBodyText(response, url.href);
    } catch (error) {
      if (this.context.signal.aborted) throw this.context.signal.reason;
      if (error instanceof SkillboxError) throw error;
      throw unreachableError(url.href, error);
    }
  }

  private accept(response: Response, text: string, url: URL, cacheKey: string): GithubAnswer {
    const link = response.headers.get("link");
    const etag = response.headers.get("etag");
    const body = this.parseBody(text, url, response.status);
    // Only complete answers are worth revalidating; a 202 ("still computing") is not.
    if (response.status === 200 && etag !== null) this.cache.set(cacheKey, { etag, bodyText: text, link });
    return { status: response.status, body, link, url: url.href, fromCache: false };
  }

  /** Parsed JSON, or `null` for an empty body. */
  private parseBody(text: string, url: URL, status: number): unknown {
    if (text.trim() === "") return null;
    try {
      return JSON.parse(text);
    } catch {
      // No `cause`: V8's SyntaxError quotes the start of the body, which a misbehaving server
      // could make an echo of the token.
      throw new SkillboxError(
        "UPSTREAM_ERROR",
        `GET ${url.href} did not answer with JSON; is SKILLBOX_GITHUB_API_URL the API (GitHub Enterprise: https://<host>/api/v3)?`,
        { retryable: false, data: { url: url.href, status } },
      );
    }
  }

  private redact(text: string | undefined): string | undefined {
    return text === undefined ? undefined : withoutSecret(text, this.settings.token);
  }

  /** Sits out a rate limit when the settings and the execution's time allow, otherwise fails now. */
  private async waitOut(limit: RateLimitAnswer, request: FailedRequest, waits: number): Promise<void> {
    if (waits > MAX_RATE_LIMIT_WAITS) {
      throw rateLimitedError(limit, request, `still limited after ${MAX_RATE_LIMIT_WAITS} waits`);
    }
    if (limit.waitMs > this.settings.rateLimitMaxWaitMs) {
      throw rateLimitedError(
        limit,
        request,
        `longer than the allowed wait of ${this.settings.rateLimitMaxWaitMs} ms`,
      );
    }
    const deadline = this.context.deadline;
    if (deadline !== undefined && Date.now() + limit.waitMs >= deadline) {
      throw rateLimitedError(limit, request, "longer than the time left before the skill's timeout");
    }
    this.context.logger.info("github rate limit: waiting before retrying", {
      url: request.url,
      waitMs: limit.waitMs,
      resetAt: limit.resetAt,
    });
    await pause(limit.waitMs, this.context.signal);
  }
}

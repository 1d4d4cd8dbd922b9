import { describe, expect, it } from "vitest";
import { nextLinkOf } from "../lib/link-header.ts";
import { rateLimitOf } from "../lib/rate-limit.ts";
import { countByWeek, weekStartOf } from "../lib/weekly-counts.ts";

describe("nextLinkOf", () => {
  it("finds the next page among GitHub's relations", () => {
    const header =
      '<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last"';
    expect(nextLinkOf(header)).toBe("https://api.github.com/repositories/1/issues?page=2");
    expect(nextLinkOf('<https://a.example/?page=1>; rel="prev"')).toBeUndefined();
    expect(nextLinkOf(null)).toBeUndefined();
    expect(nextLinkOf('<https://a.example/?page=3>; rel="prev next"')).toBe("https://a.example/?page=3");
  });

  it("reads past quoted parameters holding commas or semicolons", () => {
    expect(nextLinkOf('<https://a.example/?page=2>; title="a, b; c"; rel="next"')).toBe(
      "https://a.example/?page=2",
    );
    expect(
      nextLinkOf(
        '<https://a.example/?page=1>; title="x, <y>"; rel="prev", <https://a.example/?page=3>; rel="next"',
      ),
    ).toBe("https://a.example/?page=3");
    expect(nextLinkOf('<https://a.example/?page=2>; title="x; rel=next"; rel="prev"')).toBeUndefined();
  });
});

describe("rateLimitOf", () => {
  const now = Date.parse("2024-05-01T00:00:00Z");

  it("reads Retry-After in seconds or as a date", () => {
    expect(rateLimitOf(429, new Headers({ "retry-after": "30" }), undefined, now)).toEqual({
      waitMs: 30_000,
      resetAt: "2024-05-01T00:00:30.000Z",
    });
    expect(
      rateLimitOf(403, new Headers({ "retry-after": "Wed, 01 May 2024 00:01:00 GMT" }), undefined, now)
        ?.waitMs,
    ).toBe(60_000);
  });

  it("reads X-RateLimit-Reset only when the remaining count is 0", () => {
    const reset = String(now / 1000 + 90);
    expect(
      rateLimitOf(
        403,
        new Headers({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }),
        undefined,
        now,
      ),
    ).toEqual({
      waitMs: 90_000,
      resetAt: "2024-05-01T00:01:30.000Z",
    });
    expect(
      rateLimitOf(
        403,
        new Headers({ "x-ratelimit-remaining": "12", "x-ratelimit-reset": reset }),
        "Forbidden",
        now,
      ),
    ).toBeUndefined();
  });

  it("ignores other statuses", () => {
    expect(rateLimitOf(500, new Headers({ "retry-after": "1" }), undefined, now)).toBeUndefined();
  });
});

describe("countByWeek", () => {
  it("buckets by Sunday-started UTC weeks and fills the range with zeros", () => {
    expect(new Date(weekStartOf(Date.parse("2024-05-04T23:59:59Z"))).toISOString()).toBe(
      "2024-04-28T00:00:00.000Z",
    );
    const weeks = countByWeek([Date.parse("2024-05-05T00:00:00Z")], {
      from: Date.parse("2024-04-20T00:00:00Z"),
      to: Date.parse("2024-05-06T00:00:00Z"),
    });
    expect(weeks.map((week) => [week.weekStart, week.total])).toEqual([
      ["2024-04-14", 0],
      ["2024-04-21", 0],
      ["2024-04-28", 0],
      ["2024-05-05", 1],
    ]);
  });

  it("lists only weeks with commits when the range spans decades", () => {
    const weeks = countByWeek([0, Date.parse("2024-05-01T00:00:00Z")], {
      from: 0,
      to: Date.parse("2024-05-01T00:00:00Z"),
    });
    expect(weeks).toHaveLength(2);
  });
});

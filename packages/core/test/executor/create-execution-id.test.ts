import { validate, version } from "uuid";
import { describe, expect, it } from "vitest";
import { createExecutionId } from "../../src/executor/create-execution-id.js";

/** The creation time a UUIDv7 carries: its first 48 bits, milliseconds since the epoch. */
function millisecondsOf(id: string): number {
  return Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
}

/**
 * Ids minted back to back until the clock has moved on at least `ticks` milliseconds and at
 * least `count` were made: counted, not timed, so a loaded machine cannot make too few.
 */
function idsAcrossTicks(ticks: number, count: number): string[] {
  const ids: string[] = [];
  const start = Date.now();
  while (Date.now() < start + ticks || ids.length < count) ids.push(createExecutionId());
  return ids;
}

/** `ids` grouped by the millisecond they carry, in the order they came. */
function byMillisecond(ids: string[]): string[][] {
  const groups = new Map<number, string[]>();
  for (const id of ids) {
    const milliseconds = millisecondsOf(id);
    const group = groups.get(milliseconds);
    if (group === undefined) groups.set(milliseconds, [id]);
    else group.push(id);
  }
  return [...groups.values()];
}

/** The ids minted within one millisecond that shared it with the most others. */
function largestMillisecond(ids: string[]): string[] {
  return byMillisecond(ids).reduce((largest, group) => (group.length > largest.length ? group : largest));
}

describe("createExecutionId", () => {
  it("mints RFC 9562 UUIDv7s in lowercase hex, carrying the time they were made", () => {
    const before = Date.now();
    const id = createExecutionId();
    const after = Date.now();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(validate(id)).toBe(true);
    expect(version(id)).toBe(7);
    expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondsOf(id)).toBeLessThanOrEqual(after);
  });

  it("sorts ids as text in the order they were made, within one millisecond and across many", () => {
    // Several milliseconds' worth, far more ids than one refill of the random pool (512).
    const ids = idsAcrossTicks(5, 1200);
    expect(ids.length).toBeGreaterThan(512);
    // Across milliseconds: the time part grows with the clock.
    expect(millisecondsOf(ids.at(-1)!)).toBeGreaterThan(millisecondsOf(ids[0]!));
    // Within one: a loop this tight mints many ids per millisecond, and they keep their order.
    const sameMillisecond = largestMillisecond(ids);
    expect(sameMillisecond.length).toBeGreaterThan(1);
    expect(sameMillisecond.toSorted()).toEqual(sameMillisecond);
    // And the whole run, as SQLite's text primary key and `ORDER BY id` see it.
    expect(ids.toSorted()).toEqual(ids);
  });

  it("never mints the same id twice", () => {
    const count = 200_000;
    const ids = new Set<string>();
    for (let index = 0; index < count; index++) ids.add(createExecutionId());
    expect(ids.size).toBe(count);
  });

  it("draws fresh random bits for every id, also past one refill of the random pool", () => {
    // The last 40 bits are random alone: 2,000 draws of them repeat with odds near 1 in 10^6,
    // while a pool reused after its 512 ids would repeat every 512th.
    const tails = Array.from({ length: 2_000 }, () => createExecutionId().slice(-10));
    expect(new Set(tails).size).toBe(tails.length);
  });

  it("starts each millisecond's counter anew at random, so ids say little about how many came before", () => {
    // The counter's first value in a millisecond is drawn at random (as uuid's own v7 does),
    // so the first ids of different milliseconds differ past the time part.
    const firsts = byMillisecond(idsAcrossTicks(20, 2)).map((group) => group[0]!);
    expect(firsts.length).toBeGreaterThan(2);
    const counters = new Set(firsts.map((id) => id.replaceAll("-", "").slice(12, 20)));
    expect(counters.size).toBeGreaterThan(1);
  });
});

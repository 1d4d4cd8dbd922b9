import { expect } from "vitest";

/**
 * How long a browser test waits for the page to show what it asserts. `expect.poll`'s own default
 * (1 s) is too short for a re-render or a live event on a slow, loaded CI machine.
 */
export const PAGE_WAIT_MS = 30_000;

/**
 * Polls `read` until it meets the assertion that follows (`.toBe(…)`, `.toContain(…)`): the page
 * renders a frame after an action or a live event, so a single read right after it races it.
 */
export function eventually<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: PAGE_WAIT_MS });
}

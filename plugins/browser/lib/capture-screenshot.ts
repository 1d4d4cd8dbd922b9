import { SkillboxError } from "@skillbox/core/handler";
import type { Page } from "playwright-core";
import { locateScope, SELECTOR_TIMEOUT_MS, selectorError } from "./page-content.js";
import { pngSize } from "./png-image.js";

/** Full-page screenshots stop at this many pixels per side (a page can be endless). */
const MAX_CAPTURE_SIDE = 16_384;

/** Largest PNG returned as base64 (it lands in the audit trail); bigger ones must go to a file. */
const MAX_INLINE_SCREENSHOT_BYTES = 5 * 1024 * 1024;

/** Throws `SIZE_LIMIT_EXCEEDED` when a PNG is too big to return inline; `fix` says what to do instead. */
export function assertInlineSize(skillName: string, bytes: number, fix: string): void {
  if (bytes <= MAX_INLINE_SCREENSHOT_BYTES) return;
  throw new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `${skillName}: the PNG is ${bytes} bytes, more than the ${MAX_INLINE_SCREENSHOT_BYTES} returned inline; ${fix}`,
    { data: { bytes, limit: MAX_INLINE_SCREENSHOT_BYTES } },
  );
}

/** A PNG screenshot and what is known about it. */
export interface CapturedScreenshot {
  png: Buffer;
  width: number;
  height: number;
  /** A full page taller or wider than {@link MAX_CAPTURE_SIDE} was cut there. */
  truncated: boolean;
}

/** What to capture: the viewport (default), the whole page, or one element. */
export interface CaptureOptions {
  fullPage?: boolean;
  selector?: string | undefined;
}

async function pageExtent(page: Page): Promise<{ width: number; height: number }> {
  // A string, not a function: the project compiles without DOM types.
  return page.evaluate(
    "({ width: Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0), height: Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0) })",
  ) as Promise<{ width: number; height: number }>;
}

async function captureFullPage(page: Page): Promise<{ png: Buffer; truncated: boolean }> {
  const extent = await pageExtent(page);
  if (extent.width <= MAX_CAPTURE_SIDE && extent.height <= MAX_CAPTURE_SIDE) {
    return { png: await page.screenshot({ fullPage: true, type: "png", timeout: 0 }), truncated: false };
  }
  const clip = {
    x: 0,
    y: 0,
    width: Math.min(extent.width, MAX_CAPTURE_SIDE),
    height: Math.min(extent.height, MAX_CAPTURE_SIDE),
  };
  return { png: await page.screenshot({ fullPage: true, clip, type: "png", timeout: 0 }), truncated: true };
}

/**
 * Takes a PNG of the viewport, the full page or the first element matching `selector`. No
 * Playwright timeout applies (the execution's signal bounds it) except while waiting for the
 * element (`ELEMENT_NOT_FOUND` after a few seconds).
 */
export async function captureScreenshot(
  skillName: string,
  page: Page,
  options: CaptureOptions = {},
): Promise<CapturedScreenshot> {
  let png: Buffer;
  let truncated = false;
  if (options.selector !== undefined) {
    const element = await locateScope(skillName, page, options.selector);
    try {
      png = await element.screenshot({ type: "png", timeout: SELECTOR_TIMEOUT_MS });
    } catch (error) {
      throw selectorError(skillName, "selector", options.selector, error);
    }
  } else if (options.fullPage) {
    ({ png, truncated } = await captureFullPage(page));
  } else {
    png = await page.screenshot({ type: "png", timeout: 0 });
  }
  return { png, ...pngSize(png), truncated };
}

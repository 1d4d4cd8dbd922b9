import { z } from "zod";

/** The page to open: an absolute http(s) URL on an allowed host. */
export const urlSchema = z
  .url({ error: "must be an absolute URL such as https://example.com/" })
  .max(4096)
  .describe("Absolute http(s) URL of the page to open; its host must be in the allowlist");

/** When navigation counts as done. */
export const waitUntilSchema = z
  .enum(["load", "domcontentloaded", "networkidle"])
  .default("load")
  .describe("When the page counts as loaded: `load` (default), `domcontentloaded` or `networkidle`");

/** The browser window size in CSS pixels. */
export const viewportSchema = z
  .object({
    width: z.number().int().min(100).max(3840).default(1280),
    height: z.number().int().min(100).max(3840).default(720),
  })
  .strict()
  .default({ width: 1280, height: 720 })
  .describe("Window size in CSS pixels (100–3840 each; default 1280×720)");

/** A CSS (or Playwright `text=…`, `role=…`) selector. */
export const selectorSchema = z.string().min(1).max(1000);

/** Requests the host allowlist aborted during the execution. */
export const blockedRequestsSchema = z
  .number()
  .int()
  .min(0)
  .describe("How many requests of the page (and WebSocket connections) the host allowlist aborted");

/** A PNG screenshot returned inline. */
export const inlineScreenshotSchema = z
  .object({
    format: z.literal("png"),
    width: z.number().int().min(1),
    height: z.number().int().min(1),
    bytes: z.number().int().min(1),
    base64: z.string(),
  })
  .strict();

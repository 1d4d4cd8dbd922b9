import { z } from "zod";
import { browserSkillFactory } from "../lib/browser-skill-factory.js";
import { assertInlineSize, captureScreenshot } from "../lib/capture-screenshot.js";
import { assertNoRefusedNavigation } from "../lib/navigate.js";
import { locateScope, readContent } from "../lib/page-content.js";
import { runSteps } from "../lib/run-steps.js";
import {
  blockedRequestsSchema,
  inlineScreenshotSchema,
  selectorSchema,
  urlSchema,
  viewportSchema,
  waitUntilSchema,
} from "../lib/skill-schemas.js";

const SKILL_NAME = "browser.interact";

const step = z.discriminatedUnion("action", [
  z.object({ action: z.literal("fill"), selector: selectorSchema, value: z.string().max(10_000) }).strict(),
  z.object({ action: z.literal("click"), selector: selectorSchema }).strict(),
  z.object({ action: z.literal("press"), selector: selectorSchema, key: z.string().min(1).max(50) }).strict(),
  z.object({ action: z.literal("select"), selector: selectorSchema, value: z.string().max(1000) }).strict(),
  z.object({ action: z.literal("check"), selector: selectorSchema }).strict(),
  z.object({ action: z.literal("wait-for"), selector: selectorSchema }).strict(),
]);

const input = z
  .object({
    url: urlSchema,
    waitUntil: waitUntilSchema,
    steps: z
      .array(step)
      .min(1)
      .max(20)
      .describe(
        "Run in order on the first element each selector matches: fill (value), click, press (key, e.g. Enter), select (option value), check, wait-for (until visible)",
      ),
    stepTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(30_000)
      .default(5000)
      .describe("How long each step may wait for its element (default 5000)"),
    extract: selectorSchema.optional().describe("Return the text of this element instead of the body"),
    maxTextChars: z.number().int().min(1).max(100_000).default(5000).describe("Longest text returned"),
    screenshot: z.boolean().default(false).describe("Also return a PNG of the viewport at the end"),
    viewport: viewportSchema,
  })
  .strict();

const output = z
  .object({
    url: z.string().describe("The page's URL after the steps"),
    title: z.string(),
    text: z.string().describe("Rendered text of `extract` (or the body) after the steps"),
    truncated: z.boolean().describe("The text was cut at `maxTextChars`"),
    completed: z.boolean().describe("Every step succeeded; otherwise the last entry of `steps` failed"),
    steps: z.array(
      z
        .object({
          action: z.enum(["fill", "click", "press", "select", "check", "wait-for"]),
          selector: z.string(),
          ok: z.boolean(),
          error: z.string().optional(),
        })
        .strict(),
    ),
    blockedRequests: blockedRequestsSchema,
    screenshot: inlineScreenshotSchema.optional(),
  })
  .strict();

/**
 * Creates `browser.interact`: opens a page, runs a short script of fills, clicks and key presses
 * (stopping at the first failing step, reported with `ok: false`), then returns the resulting
 * page's URL, title and text, and optionally a screenshot. A step that navigates to a host
 * outside the allowlist fails the execution with `URL_REFUSED`.
 */
export const createInteractSkill = browserSkillFactory({
  name: SKILL_NAME,
  input,
  output,
  async run(request, { session, settings }) {
    const { page } = session;
    const { outcomes, completed } = await runSteps(page, request.steps, {
      stepTimeoutMs: request.stepTimeoutMs,
      afterStep: () => assertNoRefusedNavigation(SKILL_NAME, session, settings),
    });
    await page.waitForLoadState(request.waitUntil, { timeout: 0 });
    assertNoRefusedNavigation(SKILL_NAME, session, settings);
    const scope = await locateScope(SKILL_NAME, page, request.extract, "extract");
    const content = await readContent(scope, request.maxTextChars, 0);
    const result = {
      url: page.url(),
      title: await page.title(),
      text: content.text,
      truncated: content.truncated,
      completed,
      steps: outcomes,
      blockedRequests: session.blockedRequests,
    };
    if (!request.screenshot) return result;
    const shot = await captureScreenshot(SKILL_NAME, page);
    assertInlineSize(
      SKILL_NAME,
      shot.png.length,
      'use browser.screenshot with `"output": "file"` or a smaller viewport',
    );
    const screenshot = {
      format: "png" as const,
      width: shot.width,
      height: shot.height,
      bytes: shot.png.length,
      base64: shot.png.toString("base64"),
    };
    return { ...result, screenshot };
  },
});

/** `browser.interact` configured from the environment at each execution. */
export default createInteractSkill();

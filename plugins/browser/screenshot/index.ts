import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";
import { browserSkillFactory } from "../lib/browser-skill-factory.js";
import { assertInlineSize, captureScreenshot } from "../lib/capture-screenshot.js";
import { selectorSchema, urlSchema, viewportSchema, waitUntilSchema } from "../lib/skill-schemas.js";
import { resolveWorkspaceFile, writeWorkspaceFile } from "../lib/workspace-file.js";

const SKILL_NAME = "browser.screenshot";

const input = z
  .object({
    url: urlSchema,
    waitUntil: waitUntilSchema,
    fullPage: z
      .boolean()
      .default(false)
      .describe("Capture the whole scrollable page (cut at 16384 px) instead of the viewport"),
    selector: selectorSchema.optional().describe("Capture only the first element matching this selector"),
    viewport: viewportSchema,
    output: z
      .enum(["base64", "file"])
      .default("base64")
      .describe('"base64" (default) returns the PNG inline; "file" writes it to `path` in your workspace'),
    path: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('Workspace-relative file path for output "file", e.g. "shots/home.png"'),
  })
  .strict();

const output = z
  .object({
    format: z.literal("png"),
    url: z.string().describe("The page's final URL (after redirects)"),
    width: z.number().int().min(1).describe("Image width in pixels"),
    height: z.number().int().min(1).describe("Image height in pixels"),
    bytes: z.number().int().min(1).describe("Size of the PNG in bytes"),
    base64: z.string().optional().describe('The PNG, base64-encoded (output "base64")'),
    path: z
      .string()
      .optional()
      .describe('Where the PNG was written, relative to your workspace (output "file")'),
    truncated: z.boolean().describe("A full page larger than 16384 px was cut"),
  })
  .strict();

type ScreenshotInput = z.output<typeof input>;

function assertOutputFields(request: ScreenshotInput): void {
  if (request.output === "file" && request.path === undefined) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${SKILL_NAME}: \`path\` is required when \`output\` is "file"; give a workspace-relative path such as "shots/home.png"`,
    );
  }
  if (request.output === "base64" && request.path !== undefined) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${SKILL_NAME}: \`path\` is only used with \`output\` "file"; add \`"output": "file"\` or drop \`path\``,
    );
  }
}

/**
 * Creates `browser.screenshot`: opens a page and returns a PNG of the viewport, the full page or
 * one element, inline as base64 or written to a file in the caller's workspace (the workspace of
 * `ctx.apiKeyId`, under `settings.workspaceRoot` or `SKILLBOX_WORKSPACE_DIR`).
 */
export const createScreenshotSkill = browserSkillFactory({
  name: SKILL_NAME,
  input,
  output,
  validate: assertOutputFields,
  async prepare(request, settings, context) {
    // A refused path fails before the browser does any work.
    if (request.path !== undefined) {
      await resolveWorkspaceFile(context.apiKeyId, request.path, settings.workspaceRoot);
    }
  },
  async run(request, { session, settings }, context) {
    const shot = await captureScreenshot(SKILL_NAME, session.page, request);
    const result = {
      format: "png" as const,
      url: session.page.url(),
      width: shot.width,
      height: shot.height,
      bytes: shot.png.length,
      truncated: shot.truncated,
    };
    if (request.path === undefined) {
      assertInlineSize(
        SKILL_NAME,
        shot.png.length,
        'use `"output": "file"` with a `path`, a smaller viewport or no fullPage',
      );
      return { ...result, base64: shot.png.toString("base64") };
    }
    const path = await writeWorkspaceFile(context.apiKeyId, request.path, shot.png, settings.workspaceRoot);
    return { ...result, path };
  },
});

/** `browser.screenshot` configured from the environment at each execution. */
export default createScreenshotSkill();

import { z } from "zod";
import { browserSkillFactory } from "../lib/browser-skill-factory.js";
import { locateScope, readContent } from "../lib/page-content.js";
import { blockedRequestsSchema, selectorSchema, urlSchema, waitUntilSchema } from "../lib/skill-schemas.js";

const SKILL_NAME = "browser.extract";

const input = z
  .object({
    url: urlSchema,
    selector: selectorSchema
      .optional()
      .describe("Reads only the first element matching this selector (default: the whole body)"),
    waitUntil: waitUntilSchema,
    maxTextChars: z
      .number()
      .int()
      .min(1)
      .max(200_000)
      .default(20_000)
      .describe("Longest text returned; longer text is cut and `truncated` set"),
    maxLinks: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(100)
      .describe("Most links returned (0: none); more are dropped and `truncated` set"),
  })
  .strict();

const output = z
  .object({
    url: z.string().describe("The page's final URL (after redirects)"),
    status: z
      .number()
      .int()
      .min(100)
      .max(599)
      .nullable()
      .describe("HTTP status of the page's response, null without one"),
    title: z.string(),
    text: z.string().describe("Rendered text (innerText) of the page or the selected element"),
    links: z.array(z.object({ text: z.string(), href: z.string() }).strict()),
    truncated: z.boolean().describe("The text or the links were cut at their limit"),
    blockedRequests: blockedRequestsSchema,
  })
  .strict();

/**
 * Creates `browser.extract`: opens a page in the shared Chromium and returns its title, rendered
 * text and links (of the whole page or one element). Without `settings`, each execution reads
 * them from the environment (`SKILLBOX_BROWSER_EXECUTABLE`, `SKILLBOX_BROWSER_ALLOWED_HOSTS`).
 */
export const createExtractSkill = browserSkillFactory({
  name: SKILL_NAME,
  input,
  output,
  async run(request, { session, status }) {
    const scope = await locateScope(SKILL_NAME, session.page, request.selector);
    const content = await readContent(scope, request.maxTextChars, request.maxLinks);
    return {
      url: session.page.url(),
      status,
      title: await session.page.title(),
      ...content,
      blockedRequests: session.blockedRequests,
    };
  },
});

/** `browser.extract` configured from the environment at each execution. */
export default createExtractSkill();

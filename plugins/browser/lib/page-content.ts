import { SkillboxError } from "@skillbox/core/handler";
import { errors, type Locator, type Page } from "playwright-core";

/** A link found on the page: its visible text and its absolute address. */
export interface PageLink {
  text: string;
  href: string;
}

/** Text (and links) read from a page or one element of it. */
export interface PageContent {
  text: string;
  links: PageLink[];
  /** The text or the links were cut at their limit. */
  truncated: boolean;
}

/** How long a selector may take to appear before the skill gives up on it. */
export const SELECTOR_TIMEOUT_MS = 5_000;

/** The DOM surface the in-page function uses (the project compiles without the DOM library). */
interface DomAnchor {
  href: string;
  innerText?: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
}
interface DomElement extends DomAnchor {
  querySelectorAll(selector: string): ArrayLike<DomAnchor>;
  matches(selector: string): boolean;
}

/**
 * Turns Playwright's failure to find `selector` into `ELEMENT_NOT_FOUND`, and a malformed
 * selector into `INPUT_INVALID`; anything else is returned unchanged.
 */
export function selectorError(skillName: string, field: string, selector: string, error: unknown): unknown {
  if (error instanceof errors.TimeoutError) {
    return new SkillboxError(
      "ELEMENT_NOT_FOUND",
      `${skillName}: no element matching \`${field}\` ${JSON.stringify(selector)} was found (or became usable) within ${SELECTOR_TIMEOUT_MS} ms; check the selector against the page (CSS, or Playwright's text=…/role=… forms)`,
      { data: { selector }, retryable: false, cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/selector|unexpected token|unknown engine/i.test(message) && !/closed/i.test(message)) {
    return new SkillboxError(
      "INPUT_INVALID",
      `${skillName}: \`${field}\` ${JSON.stringify(selector)} is not a valid selector (${message.split("\n")[0]})`,
      { data: { selector }, cause: error },
    );
  }
  return error;
}

/** The first element matching `selector` (or `body`), once it is attached to the page. */
export async function locateScope(
  skillName: string,
  page: Page,
  selector: string | undefined,
  field = "selector",
): Promise<Locator> {
  const scope = page.locator(selector ?? "body").first();
  try {
    await scope.waitFor({ state: "attached", timeout: SELECTOR_TIMEOUT_MS });
  } catch (error) {
    throw selectorError(skillName, field, selector ?? "body", error);
  }
  return scope;
}

/**
 * Reads the rendered text (`innerText`: what a reader sees, without scripts and hidden parts,
 * blank-line runs squeezed) and, when `maxLinks` > 0, the links of `scope`. Both are cut inside the
 * page, so a huge page never crosses the wire whole.
 */
export async function readContent(
  scope: Locator,
  maxTextChars: number,
  maxLinks: number,
): Promise<PageContent> {
  const raw = await scope.evaluate(
    (element: DomElement, limits: { maxTextChars: number; maxLinks: number }) => {
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point (no script bodies, no hidden parts).
      const fullText = (element.innerText ?? element.textContent ?? "")
        .replace(/\r\n?/g, "\n")
        .replace(/[ \t\f\v\u00a0]+\n/g, "\n")
        .replace(/\n{3,}/g, "\n\n")
        .trim();
      const links: { text: string; href: string }[] = [];
      const seen = new Set<string>();
      let moreLinks = false;
      if (limits.maxLinks > 0) {
        const anchors = Array.from(element.querySelectorAll("a[href], area[href]"));
        if (element.matches("a[href], area[href]")) anchors.unshift(element);
        for (const anchor of anchors) {
          const href = anchor.href;
          if (typeof href !== "string" || href === "" || /^javascript:/i.test(href)) continue;
          // biome-ignore lint/performance/useDomNodeTextContent: what the reader sees as the link's label.
          const label = anchor.innerText || anchor.textContent || anchor.getAttribute("aria-label") || "";
          const text = label.replace(/\s+/g, " ").trim().slice(0, 300);
          const key = `${href}\n${text}`;
          if (seen.has(key)) continue;
          if (links.length === limits.maxLinks) {
            moreLinks = true;
            break;
          }
          seen.add(key);
          links.push({ text, href });
        }
      }
      return {
        text: fullText.slice(0, limits.maxTextChars),
        textCut: fullText.length > limits.maxTextChars,
        links,
        moreLinks,
      };
    },
    { maxTextChars, maxLinks },
  );
  return { text: raw.text, links: raw.links, truncated: raw.textCut || raw.moreLinks };
}

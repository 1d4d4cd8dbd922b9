import type { Locator, Page } from "playwright-core";

/** One scripted action on the page. */
export type InteractionStep =
  | { action: "fill"; selector: string; value: string }
  | { action: "click"; selector: string }
  | { action: "press"; selector: string; key: string }
  | { action: "select"; selector: string; value: string }
  | { action: "check"; selector: string }
  | { action: "wait-for"; selector: string };

/** What happened to one step. */
export interface StepOutcome {
  action: InteractionStep["action"];
  selector: string;
  ok: boolean;
  /** Why the step failed (first line of Playwright's message). */
  error?: string;
}

/** How {@link runSteps} runs the script. */
export interface RunStepsOptions {
  /** How long each step may wait for its element to appear and become usable. */
  stepTimeoutMs: number;
  /** Called after every successful step; throwing stops the script (a refused navigation). */
  afterStep?: () => void;
}

async function perform(element: Locator, step: InteractionStep, timeout: number): Promise<void> {
  switch (step.action) {
    case "fill":
      return element.fill(step.value, { timeout });
    case "click":
      return element.click({ timeout });
    case "press":
      return element.press(step.key, { timeout });
    case "select":
      await element.selectOption(step.value, { timeout });
      return;
    case "check":
      return element.check({ timeout });
    case "wait-for":
      return element.waitFor({ state: "visible", timeout });
  }
}

/**
 * Runs `steps` in order on the first element each selector matches, stopping at the first step
 * that fails; that step is reported with `ok: false` and its error, later ones are not run. After
 * each step the page may have navigated (a submit, a link): the next step waits for the new
 * document's DOM.
 */
export async function runSteps(
  page: Page,
  steps: readonly InteractionStep[],
  options: RunStepsOptions,
): Promise<{ outcomes: StepOutcome[]; completed: boolean }> {
  const outcomes: StepOutcome[] = [];
  for (const step of steps) {
    try {
      await perform(page.locator(step.selector).first(), step, options.stepTimeoutMs);
      await page.waitForLoadState("domcontentloaded", { timeout: 0 });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      outcomes.push({
        action: step.action,
        selector: step.selector,
        ok: false,
        error: message.split("\n")[0],
      });
      options.afterStep?.();
      return { outcomes, completed: false };
    }
    outcomes.push({ action: step.action, selector: step.selector, ok: true });
    options.afterStep?.();
  }
  return { outcomes, completed: true };
}

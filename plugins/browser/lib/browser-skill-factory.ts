import { type DefinedSkill, defineSkill, type SkillContext } from "@skillbox/core/handler";
import type { z } from "zod";
import { type BrowserSession, withBrowserSession } from "./browser-session.js";
import {
  type BrowserSettingsInput,
  type ResolvedBrowserSettings,
  settingsSource,
} from "./browser-settings.js";
import { assertAllowedUrl, navigate, type WaitUntil } from "./navigate.js";
import { sendTraceHeadersOnNavigation } from "./navigation-trace-headers.js";

/** The input fields every browser skill has: the page to open, when it counts as loaded, the window. */
export interface PageRequest {
  url: string;
  waitUntil: WaitUntil;
  viewport?: { width: number; height: number };
}

/** The page a skill works on, already loaded from `request.url`. */
export interface LoadedPage {
  session: BrowserSession;
  /** The settings in force for this execution. */
  settings: ResolvedBrowserSettings;
  /** HTTP status of the page's main response, `null` without one. */
  status: number | null;
}

/** What a browser member skill supplies: its schemas, its own checks, and the work on the loaded page. */
export interface BrowserSkillDefinition<Input extends z.ZodType<PageRequest>, Output extends z.ZodType> {
  /** The skill's name, which starts its error messages. */
  name: string;
  input: Input;
  output: Output;
  /** Input rules the schema cannot express; runs first, before even the URL is checked. */
  validate?(request: z.output<Input>): void;
  /**
   * Refusals that need the settings but no browser (a workspace path); runs once the URL is known
   * to be allowed, so a refused URL leaves nothing behind.
   */
  prepare?(request: z.output<Input>, settings: ResolvedBrowserSettings, context: SkillContext): Promise<void>;
  run(request: z.output<Input>, page: LoadedPage, context: SkillContext): Promise<z.output<Output>>;
}

/** `createXSkill(settings?)`: explicit settings, or none to read the environment at each execution. */
export type BrowserSkillFactory = (settings?: BrowserSettingsInput) => DefinedSkill;

/**
 * Builds a member's factory. Each execution checks the request without launching anything (a
 * refused URL costs no browser), then opens `request.url` in a fresh session of the shared
 * Chromium (with the execution's trace context on navigations to its origin) and hands the
 * loaded page to `run`; the session closes when `run` settles.
 */
export function browserSkillFactory<Input extends z.ZodType<PageRequest>, Output extends z.ZodType>(
  definition: BrowserSkillDefinition<Input, Output>,
): BrowserSkillFactory {
  return (settingsInput) => {
    const currentSettings = settingsSource(settingsInput);
    const handler = async (request: z.output<Input>, context: SkillContext) => {
      const settings = currentSettings();
      definition.validate?.(request);
      assertAllowedUrl(definition.name, request.url, settings);
      await definition.prepare?.(request, settings, context);
      const sessionOptions = {
        settings,
        signal: context.signal,
        viewport: request.viewport,
        hostLifecycle: context.hostLifecycle,
      };
      return withBrowserSession(sessionOptions, async (session) => {
        await sendTraceHeadersOnNavigation(session.page, request.url, context.traceHeaders());
        const status = await navigate(definition.name, session, request.url, request.waitUntil, settings);
        return definition.run(request, { session, settings, status }, context);
      });
    };
    return defineSkill({
      input: definition.input as z.ZodType,
      output: definition.output as z.ZodType,
      handler: handler as (input: unknown, context: SkillContext) => Promise<unknown>,
    });
  };
}

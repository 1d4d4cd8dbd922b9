import { type DefinedSkill, defineSkill, type SkillContext } from "@skillbox/core/handler";
import type { z } from "zod";
import { GithubClient } from "./github-client.js";
import {
  type GithubSettings,
  type GithubSettingsOptions,
  parseGithubSettings,
  readGithubSettings,
} from "./github-settings.js";

/** The executor's per-attempt timeout when a skill declares none. */
const EXECUTOR_DEFAULT_TIMEOUT_MS = 30_000;

/** What a GitHub member skill supplies: its schemas and the work, given a ready client. */
export interface GithubSkillDefinition<Input extends z.ZodType, Output extends z.ZodType> {
  input: Input;
  output: Output;
  run(
    input: z.output<Input>,
    client: GithubClient,
    settings: GithubSettings,
    context: SkillContext,
  ): Promise<z.output<Output>>;
}

/** `createXSkill(settings?)`: explicit settings, or none to read the environment on every call. */
export type GithubSkillFactory = (settings?: GithubSettingsOptions) => DefinedSkill;

/**
 * Builds a member's factory. With settings, they are validated now (a bad one throws
 * `CONFIG_INVALID` at once) and used for every call; without, each call reads the environment,
 * so a changed token or API URL applies without a reload.
 */
export function githubSkillFactory<Input extends z.ZodType, Output extends z.ZodType>(
  definition: GithubSkillDefinition<Input, Output>,
): GithubSkillFactory {
  return (options) => {
    const fixed = options === undefined ? undefined : parseGithubSettings(options);
    const handler = async (input: z.output<Input>, context: SkillContext) => {
      const settings = fixed ?? readGithubSettings();
      const deadline = Date.now() + (context.skill.timeoutMs ?? EXECUTOR_DEFAULT_TIMEOUT_MS);
      const client = new GithubClient(settings, {
        signal: context.signal,
        logger: context.logger,
        deadline,
        traceHeaders: () => context.traceHeaders(),
      });
      return definition.run(input, client, settings, context);
    };
    return defineSkill({
      input: definition.input as z.ZodType,
      output: definition.output as z.ZodType,
      handler: handler as (input: unknown, context: SkillContext) => Promise<unknown>,
    });
  };
}

import { readFileSync } from "node:fs";
import type { DefinedSkill, SkillLogger, SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createCommitActivitySkill } from "../../commit-activity/index.ts";
import { createContributorsSkill } from "../../contributors/index.ts";
import { createIssuesSkill } from "../../issues/index.ts";
import type { GithubSettingsOptions } from "../../lib/github-settings.ts";
import { createPullRequestsSkill } from "../../pull-requests/index.ts";
import { createReleasesSkill } from "../../releases/index.ts";
import { createRepositorySkill } from "../../repository/index.ts";

/** A member's skill.json. */
export interface MemberManifest extends Omit<SkillRegistration, "handler"> {
  name: string;
  version: string;
  handler: string;
  timeoutMs: number;
}

/** Member folder → its factory. */
export const MEMBERS: Record<string, (settings?: GithubSettingsOptions) => DefinedSkill> = {
  repository: createRepositorySkill,
  issues: createIssuesSkill,
  "pull-requests": createPullRequestsSkill,
  releases: createReleasesSkill,
  contributors: createContributorsSkill,
  "commit-activity": createCommitActivitySkill,
};

/** Reads `plugins/github/<folder>/skill.json`. */
export function readManifest(folder: string): MemberManifest {
  return JSON.parse(
    readFileSync(new URL(`../../${folder}/skill.json`, import.meta.url), "utf8"),
  ) as MemberManifest;
}

/** One call a skill made on its logger. */
export interface LogLine {
  level: string;
  message: string;
  fields: Record<string, unknown> | undefined;
}

/** A logger that keeps every line, to check what the skills (and the executor) log. */
export function createCapturingLogger(): { logger: SkillLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, fields });
    };
  return { logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }, lines };
}

/**
 * A temporary host with every GitHub member registered from its skill.json (as the loader would)
 * and bound to a handler built with `settings`. The caller disposes it.
 */
export function createGithubHost(
  settings: GithubSettingsOptions,
  options: { logger?: SkillLogger } = {},
): TemporaryHost {
  const host = createTemporaryHost(options.logger === undefined ? {} : { logger: options.logger });
  for (const [folder, factory] of Object.entries(MEMBERS)) {
    const manifest = readManifest(folder);
    const handlerName = `plugin-github-${folder}`;
    host.registry.register({ ...manifest, handler: handlerName, apiKeyId: "system" });
    host.executor.registerHandler(handlerName, factory(settings).handler);
  }
  return host;
}

import { type LoadSkillsResult, loadSkills, type SkillLoaderOptions } from "@skillbox/loader";
import { displayPath } from "@skillbox/loader/internal";
import type { ResolvedConfig } from "../config/load-config.js";
import type { Terminal } from "../terminal/terminal.js";
import type { CliHost } from "./open-cli-host.js";

/** The loader settings of the configured folders, for a one-shot load or a watcher. */
export function loaderOptionsOf(host: CliHost, config: ResolvedConfig): SkillLoaderOptions {
  return {
    dirs: config.dirs,
    npm: config.npm,
    projectRoot: config.projectRoot,
    owner: config.owner,
    registry: host.registry,
    executor: host.executor,
  };
}

/** The progress line shown while the configured folders load. */
export function loadingMessage(config: ResolvedConfig): string {
  return `loading skills from ${config.dirs.map(displayPath).join(", ")}`;
}

/**
 * Loads the configured folders (and npm skill packages) into the host once, with a progress line,
 * and prints every configured folder that does not exist and every package that failed as a
 * warning on stderr: a broken neighbour never stops a command, but it should not go unnoticed
 * either.
 */
export async function loadSkillFolders(
  host: CliHost,
  config: ResolvedConfig,
  terminal: Terminal,
): Promise<LoadSkillsResult> {
  const progress = terminal.progress(loadingMessage(config));
  let result: LoadSkillsResult;
  try {
    result = await loadSkills(loaderOptionsOf(host, config));
  } finally {
    progress.stop();
  }
  for (const warning of result.warnings) terminal.warn(warning.code, warning.message);
  for (const failure of result.failed) terminal.warn(failure.code, failure.message);
  return result;
}

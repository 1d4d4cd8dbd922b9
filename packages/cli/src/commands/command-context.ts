import type { LoadSkillsResult } from "@skillbox/loader";
import type { Command } from "commander";
import { loadConfig, type ResolvedConfig } from "../config/load-config.js";
import { loadSkillFolders } from "../host/load-skill-folders.js";
import { type CliHost, type CliHostOptions, openConfiguredHost } from "../host/open-cli-host.js";
import type { Terminal } from "../terminal/terminal.js";

/** What every command gets: the terminal, and the exit code it sets. */
export interface CommandContext {
  terminal: Terminal;
  /** The process's exit code once the command returns (0 unless a command sets it). */
  exitCode: number;
}

/** Options every command accepts (declared on the program). */
export interface GlobalOptions {
  config?: string;
  db?: string;
  /** `--queue`: the queue's Redis URL (a distributed deployment). */
  queue?: string;
  /** `--prefix`: the queue's Redis key prefix. */
  prefix?: string;
  /** `--dir`, repeatable: skill folders replacing the config's `dirs`. */
  dir?: string[];
}

/**
 * The config of `command`, from `--config` / `--db`, and the folders of `--dir` plus the
 * positional folders of the commands that take them (`dev`, `serve`, `list`): given any, they
 * replace the config's `dirs`.
 */
export function resolveCommandConfig(command: Command, dirs: string[] = []): Promise<ResolvedConfig> {
  const options = command.optsWithGlobals<GlobalOptions>();
  const folders = [...(options.dir ?? []), ...dirs];
  return loadConfig({
    configFile: options.config,
    database: options.db,
    queue: options.queue,
    queuePrefix: options.prefix,
    ...(folders.length === 0 ? {} : { dirs: folders }),
  });
}

/**
 * Runs `work` with a host over the configured database, closing it afterwards whatever happens.
 * The host never runs queued executions (`queue: false`): a one-shot command would start work
 * and then cut it short; `dev`, `serve` and `mcp` are the hosts that run them. With a queue
 * configured it is an API host of the deployment (no worker, no sweeper).
 */
export async function withHost<Result>(
  config: ResolvedConfig,
  work: (host: CliHost) => Promise<Result>,
  options: CliHostOptions = {},
): Promise<Result> {
  const host = await openConfiguredHost(config, { queue: false, ...options });
  try {
    return await work(host);
  } finally {
    await host.close();
  }
}

/**
 * Runs `work` with the configured folders loaded into a fresh host (so folder skills are found
 * and served), then stops serving them and closes the host.
 */
export function withLoadedSkills<Result>(
  context: CommandContext,
  config: ResolvedConfig,
  work: (host: CliHost, loaded: LoadSkillsResult) => Promise<Result>,
  options: CliHostOptions = {},
): Promise<Result> {
  return withHost(
    config,
    async (host) => {
      const loaded = await loadSkillFolders(host, config, context.terminal);
      try {
        return await work(host, loaded);
      } finally {
        loaded.loader.close();
      }
    },
    options,
  );
}

import type { Command } from "commander";
import {
  parsePortFlag,
  resolveServerAddress,
  type ServerAddressFlags,
} from "../server/resolve-server-settings.js";
import { type CommandContext, resolveCommandConfig } from "./command-context.js";
import { addWorkerFlags, applyWorkerFlags, type WorkerFlags } from "./worker-flags.js";

const MODES = [
  {
    name: "dev",
    watch: true,
    description: "serve the skill folders over HTTP and MCP, reloading every edit, with a live log",
  },
  {
    name: "serve",
    watch: false,
    description: "serve the skill folders over HTTP and MCP (loaded once, for production)",
  },
] as const;

/** The flags of `dev` and `serve`: the address, `--no-studio` (commander sets `studio: false`), the worker's. */
interface ServeFlags extends ServerAddressFlags, WorkerFlags {
  studio?: boolean;
}

/**
 * `skillbox dev [dirs…]`, `skillbox serve [dirs…]` and `skillbox worker [dirs…]`. With a queue,
 * `--role` makes `dev`/`serve` an API host, a worker or both (the default); `worker` is `serve
 * --role worker`: no HTTP, executions from the queue until SIGTERM.
 */
export function registerServeCommands(program: Command, context: CommandContext): void {
  for (const mode of MODES) {
    const command = program
      .command(mode.name)
      .description(mode.description)
      .argument("[dirs...]", "skill folders (default: the config's dirs, else ./plugins)")
      .option(
        "--port <port>",
        "port to listen on (0: any free port; default SKILLBOX_PORT, else 3000)",
        parsePortFlag,
      )
      .option("--host <host>", "interface to bind (default SKILLBOX_HOST, else 127.0.0.1)")
      .option("--no-studio", "do not serve Skillbox Studio, the web dashboard, at / (config: studio: false)");
    addWorkerFlags(command, { role: true }).action(
      async (dirs: string[], options: ServeFlags, command: Command) => {
        const loaded = applyWorkerFlags(await resolveCommandConfig(command, dirs), options, mode.name);
        // The flag can only turn the Studio off: without it, the config decides.
        const config = { ...loaded, studio: loaded.studio && options.studio !== false };
        const role = config.queue === undefined ? undefined : (options.role ?? "both");
        const address = role === "worker" ? undefined : resolveServerAddress(config, options);
        // Loaded on demand: the HTTP and MCP stacks would slow every other command's start.
        const { serveSkills } = await import("../server/serve-skills.js");
        await serveSkills(
          config,
          { watch: mode.watch, address, ...(role === undefined ? {} : { role }) },
          context.terminal,
        );
      },
    );
  }
  addWorkerFlags(
    program
      .command("worker")
      .description(
        "run executions from the deployment's queue (--queue) with the skill folders' code, until SIGTERM",
      )
      .argument("[dirs...]", "skill folders (default: the config's dirs, else ./plugins)"),
    { role: false },
  ).action(async (dirs: string[], options: WorkerFlags, command: Command) => {
    const config = applyWorkerFlags(await resolveCommandConfig(command, dirs), options, "worker");
    const { serveSkills } = await import("../server/serve-skills.js");
    await serveSkills(config, { watch: false, address: undefined, role: "worker" }, context.terminal);
  });
}

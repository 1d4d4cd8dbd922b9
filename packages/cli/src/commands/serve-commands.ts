import type { Command } from "commander";
import {
  parsePortFlag,
  resolveServerAddress,
  type ServerAddressFlags,
} from "../server/resolve-server-settings.js";
import { type CommandContext, resolveCommandConfig } from "./command-context.js";

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

/** The flags of `dev` and `serve`: the address, and `--no-studio` (commander sets `studio: false`). */
interface ServeFlags extends ServerAddressFlags {
  studio?: boolean;
}

/** `skillbox dev [dirs…]` and `skillbox serve [dirs…]`. */
export function registerServeCommands(program: Command, context: CommandContext): void {
  for (const mode of MODES) {
    program
      .command(mode.name)
      .description(mode.description)
      .argument("[dirs...]", "skill folders (default: the config's dirs, else ./plugins)")
      .option(
        "--port <port>",
        "port to listen on (0: any free port; default SKILLBOX_PORT, else 3000)",
        parsePortFlag,
      )
      .option("--host <host>", "interface to bind (default SKILLBOX_HOST, else 127.0.0.1)")
      .option("--no-studio", "do not serve Skillbox Studio, the web dashboard, at / (config: studio: false)")
      .action(async (dirs: string[], options: ServeFlags, command: Command) => {
        const loaded = await resolveCommandConfig(command, dirs);
        // The flag can only turn the Studio off: without it, the config decides.
        const config = { ...loaded, studio: loaded.studio && options.studio !== false };
        const address = resolveServerAddress(config, options);
        // Loaded on demand: the HTTP and MCP stacks would slow every other command's start.
        const { serveSkills } = await import("../server/serve-skills.js");
        await serveSkills(config, { watch: mode.watch, address }, context.terminal);
      });
  }
}

import type { Command } from "commander";
import { CLI_VERSION } from "../cli-version.js";
import { loadSkillFolders } from "../host/load-skill-folders.js";
import { openCliHost, openConfiguredHost, usesDeployment } from "../host/open-cli-host.js";
import { listenForShutdown } from "../server/listen-for-shutdown.js";
import { createLiveLog } from "../terminal/live-log.js";
import { type CommandContext, resolveCommandConfig } from "./command-context.js";

/**
 * stdout belongs to the protocol. `serveMcpStdio` moves console output to stderr while it
 * serves; this covers loading too, where a module's top level may already log.
 */
function keepConsoleOffStdout(): () => void {
  const methods = ["log", "info", "debug"] as const;
  const saved = methods.map((method) => console[method]);
  for (const method of methods) console[method] = console.error;
  return () => {
    methods.forEach((method, index) => {
      console[method] = saved[index]!;
    });
  };
}

/** `skillbox mcp`: an MCP server on stdio over the loaded skills; logs go to stderr. */
export function registerMcpCommand(program: Command, context: CommandContext): void {
  program
    .command("mcp")
    .description("serve the skill folders as MCP tools on stdio (for MCP clients; logs on stderr)")
    .argument("[dirs...]", "skill folders (default: the config's dirs, else ./plugins)")
    .action(async (dirs: string[], _options: unknown, command: Command) => {
      const config = await resolveCommandConfig(command, dirs);
      const { terminal } = context;
      // Loaded on demand: the MCP SDK would slow every other command's start.
      const { serveMcpStdio } = await import("@skillbox/server");
      const log = createLiveLog(terminal.printDiagnostic, terminal.diagnosticColors);
      const restoreConsole = keepConsoleOffStdout();
      const shutdown = listenForShutdown();
      // A single host synchronously: its queue and the folders' load start in the same turn.
      const host = usesDeployment(config)
        ? await openConfiguredHost(config, { logger: log.logger })
        : openCliHost(config, { logger: log.logger });
      try {
        const loaded = await loadSkillFolders(host, config, terminal);
        try {
          host.executor.on("finished", (execution) => log.executed(execution));
          const stdio = await serveMcpStdio({
            registry: host.registry,
            executor: host.executor,
            owner: config.owner,
            name: "skillbox",
            version: CLI_VERSION,
          });
          log.line("mcp", `serving ${host.registry.list(config.owner).length} skill version(s) on stdio`);
          // The client closing stdin is the normal way an MCP stdio session ends.
          void stdio.closed.then(() => shutdown.trigger("client disconnected"));
          log.line("stopping", await shutdown.requested);
          await stdio.close();
        } finally {
          loaded.loader.close();
        }
      } finally {
        await host.close({ graceMs: config.executor.shutdownGraceMs });
        shutdown.dispose();
        restoreConsole();
      }
    });
}

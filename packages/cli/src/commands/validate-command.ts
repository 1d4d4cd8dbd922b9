import { displayPath } from "@skillbox/loader/internal";
import type { Command } from "commander";
import type { Terminal } from "../terminal/terminal.js";
import { type ValidationReport, validatePackages } from "../validate/validate-packages.js";
import { type CommandContext, resolveCommandConfig } from "./command-context.js";

interface ValidateOptions {
  json?: boolean;
}

function printReport(terminal: Terminal, report: ValidationReport): void {
  const { colors } = terminal;
  for (const entry of report.packages) {
    const identity =
      entry.name === undefined
        ? ""
        : `${entry.kind} ${colors.bold(entry.name)}${entry.version === undefined ? "" : `@${entry.version}`}  `;
    terminal.print(
      `${entry.ok ? colors.green("✓") : colors.red("✗")} ${identity}${colors.dim(displayPath(entry.root))}`,
    );
    for (const problem of report.problems.filter((candidate) => candidate.root === entry.root)) {
      terminal.print(`    ${colors.red(problem.code)}: ${problem.message}`);
    }
  }
  for (const warning of report.warnings ?? []) terminal.print(`${colors.yellow("!")} ${warning.message}`);
  const failing = report.packages.filter((entry) => !entry.ok).length;
  const summary = `${report.packages.length} package(s) checked: ${report.packages.length - failing} ok, ${failing} with problems`;
  terminal.print(failing === 0 ? colors.green(summary) : colors.red(summary));
}

/** `skillbox validate [dir]`: checks manifests and handler modules without running any handler. */
export function registerValidateCommand(program: Command, context: CommandContext): void {
  program
    .command("validate")
    .description(
      "check every manifest, schema and handler module without running anything, and typecheck packages with a tsconfig.json (exit 1 on problems)",
    )
    .argument("[dir]", "a packages folder or one package (default: the configured folders)")
    .option("--json", "print the packages and problems as JSON")
    .action(async (directory: string | undefined, options: ValidateOptions, command: Command) => {
      const folders = directory === undefined ? (await resolveCommandConfig(command)).dirs : [directory];
      const reports = [];
      for (const folder of folders) reports.push(await validatePackages(folder));
      const warnings = reports.flatMap((entry) => entry.warnings ?? []);
      const report: ValidationReport = {
        packages: reports.flatMap((entry) => entry.packages),
        problems: reports.flatMap((entry) => entry.problems),
        ...(warnings.length === 0 ? {} : { warnings }),
        ok: reports.every((entry) => entry.ok),
      };
      if (options.json) context.terminal.printJson(report);
      else printReport(context.terminal, report);
      if (!report.ok) context.exitCode = 1;
    });
}

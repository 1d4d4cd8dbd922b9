import { type Skill, SkillboxError } from "@skillbox/core";
import { displayPath } from "@skillbox/loader/internal";
import type { Command } from "commander";
import { type ExampleResult, examplesOf, runSkillExamples } from "../examples/run-skill-examples.js";
import { didYouMean } from "../host/suggest-skill-names.js";
import type { Terminal } from "../terminal/terminal.js";
import { type CommandContext, resolveCommandConfig, withLoadedSkills } from "./command-context.js";

interface TestOptions {
  json?: boolean;
}

function printResult(terminal: Terminal, result: ExampleResult): void {
  const { colors } = terminal;
  const label = `example ${result.index}${result.description === undefined ? "" : `: ${result.description}`}`;
  const timing = result.duration === null ? "" : colors.dim(` (${result.duration.toFixed(1)} ms)`);
  if (result.passed) {
    const how = result.check === "schema" ? colors.dim(" [output schema]") : "";
    terminal.print(`  ${colors.green("✓")} ${label}${how}${timing}`);
    return;
  }
  terminal.print(`  ${colors.red("✗")} ${label}${timing}`);
  const failure = result.failure;
  if (failure === undefined) return;
  terminal.print(`      ${colors.red(failure.code)}: ${failure.message}`);
  if (failure.code === "OUTPUT_MISMATCH") {
    terminal.print(`      expected ${JSON.stringify(failure.expected)}`);
    terminal.print(`      actual   ${JSON.stringify(failure.actual)}`);
  }
}

/**
 * `skillbox test [name]`: runs the `examples` of every skill loaded from the folders (`--dir` or
 * the config's), or of one, and reports pass/fail per example; exits 1 when any fails.
 */
export function registerTestCommand(program: Command, context: CommandContext): void {
  program
    .command("test")
    .description("run the examples of every skill's manifest (or of one skill); exit 1 on any failure")
    .argument("[name]", "only this skill (all its loaded versions); --dir <folder> to test another folder")
    .option("--json", "print the results as JSON")
    .action(async (name: string | undefined, options: TestOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      const { terminal } = context;
      const results = await withLoadedSkills(
        context,
        config,
        async (host, loaded) => {
          const skills = loaded.loaded
            .filter((entry) => entry.kind === "skill" && entry.skillId !== undefined)
            .filter((entry) => name === undefined || entry.name === name)
            .map((entry) => host.registry.getSkill(entry.skillId!))
            .filter((skill): skill is Skill => skill !== undefined)
            .sort(
              (a, b) => a.name.localeCompare(b.name) || host.registry.compareVersions(a.version, b.version),
            );
          if (name !== undefined && skills.length === 0) {
            const loadedNames = loaded.loaded
              .filter((entry) => entry.kind === "skill")
              .map((entry) => entry.name);
            throw new SkillboxError(
              "SKILL_NOT_FOUND",
              `no skill named "${name}" was loaded from ${config.dirs.map(displayPath).join(", ")}` +
                (didYouMean(name, loadedNames) ||
                  "; give its folder's parent with --dir (skillbox test <name> --dir <folder>)"),
            );
          }
          const all: ExampleResult[] = [];
          for (const skill of skills) {
            if (!options.json) terminal.print(terminal.colors.bold(`${skill.name}@${skill.version}`));
            if (examplesOf(skill).length === 0) {
              if (!options.json) terminal.print(terminal.colors.dim("  no examples in its manifest"));
              continue;
            }
            const results = await runSkillExamples(host.executor, skill, config.owner);
            if (!options.json) for (const result of results) printResult(terminal, result);
            all.push(...results);
          }
          return all;
          // Examples test this folder's code in this process, never a deployment's workers.
        },
        { local: true },
      );
      const failed = results.filter((result) => !result.passed).length;
      if (options.json) {
        terminal.printJson({ ok: failed === 0, passed: results.length - failed, failed, results });
      } else {
        const summary = `${results.length - failed} passed, ${failed} failed`;
        terminal.print(failed === 0 ? terminal.colors.green(summary) : terminal.colors.red(summary));
      }
      if (failed > 0) context.exitCode = 1;
    });
}

/**
 * The exit codes of `skillbox`, documented in `skillbox --help` and the README. Scripts tell
 * "you called it wrong" (fix the command line) from "it ran and failed" (fix the skill or input).
 */
export const EXIT_CODES = {
  /** The command did what it was asked. */
  success: 0,
  /**
   * The command ran and failed: an execution, an example or a check failed (`validate`, `doctor`
   * found problems), or a skill, file or config was wrong.
   */
  failure: 1,
  /** The command line is wrong: unknown command or option, missing argument, bad option value, --input that is not JSON. */
  usage: 2,
  /** The execution has not ended: it awaits approval (`run`), or `wait --timeout` ran out first. */
  pending: 3,
} as const;

/** The exit codes as `skillbox --help` lists them. */
export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  the command ran and failed: an execution or an example failed, validate or
     doctor found problems, a skill, file or config was not found or is invalid
  2  usage error: unknown command or option, missing argument, bad option value,
     --input that is not JSON
  3  the execution has not ended: it awaits approval (run), or wait --timeout ran out`;

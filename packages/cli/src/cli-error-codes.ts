import { defineErrorCodes, type ErrorCodeOf } from "@skillbox/core";

/**
 * The error codes the `skillbox` command raises or prints on top of core's and the server's
 * (it reuses the server's `NOT_FOUND`, and core's `EXECUTION_NOT_FOUND`, `APPROVAL_NOT_PENDING`
 * and `WAIT_TIMEOUT` for `executions`, `approve`/`reject` and `wait`), each with its one line of
 * documentation. None of them ends an execution.
 */
export const CLI_ERROR_CODES = defineErrorCodes({
  USAGE: {
    description: "The command line is wrong (an argument or option the command cannot use); exits 2.",
  },
  CONFIG_NOT_FOUND: { description: "The config file named by `--config` does not exist." },
  ALREADY_EXISTS: { description: "`skillbox new` would write into a folder that exists already." },
  OUTPUT_MISMATCH: { description: "`skillbox test`: a skill's output differs from its example's." },
  EXAMPLE_NEEDS_APPROVAL: {
    description:
      "`skillbox test`: an example's execution awaits approval, which `test` does not give; the execution is rejected.",
  },
  TYPE_ERROR: { description: "`skillbox validate`: TypeScript reports a type error in a package." },
  UNEXPECTED: {
    description: "An error without a code (a bug); `SKILLBOX_LOG_LEVEL=debug` prints its stack.",
  },
});

/** The error codes of the `skillbox` CLI (see {@link CLI_ERROR_CODES}). */
export type CliErrorCode = ErrorCodeOf<typeof CLI_ERROR_CODES>;

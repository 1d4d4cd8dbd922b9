/**
 * The JSON Schemas of `run-code`, mirrored in `skill.json`. They are plain JSON Schema rather than
 * zod because this module loads inside the sandbox, where only `@skillbox/core` (aliased to its
 * light entry) and Node's built-ins resolve: the plugin's own `node_modules` are pnpm symlinks
 * that point out of the mounted folder. The executor validates input and output against them on
 * the host, before and after the sandbox runs.
 */

/** The languages run-code knows; each needs its interpreter in the sandbox image. */
export const RUN_CODE_LANGUAGES = ["javascript", "python"] as const;

/** A language of {@link RUN_CODE_LANGUAGES}. */
export type RunCodeLanguage = (typeof RUN_CODE_LANGUAGES)[number];

/** Longest `code` and `stdin`, in characters. */
export const MAX_CODE_LENGTH = 100_000;
/** Most `args`, and the longest one. */
const MAX_ARGUMENTS = 64;
const MAX_ARGUMENT_LENGTH = 4_096;
/**
 * Longest program timeout a caller may ask for: below the skill's own `timeoutMs` (30 s), so
 * the program is stopped and reported (`timedOut: true`) before the executor gives up on the
 * whole sandbox, which needs a moment to start.
 */
export const MAX_PROGRAM_TIMEOUT_MS = 20_000;
export const MIN_PROGRAM_TIMEOUT_MS = 100;

/** The input of `run-code`. */
export interface RunCodeInput {
  language: RunCodeLanguage;
  code: string;
  stdin?: string;
  args?: string[];
  timeoutMs?: number;
}

/** The output of `run-code`: how the program ended and what it printed. */
export interface RunCodeOutput {
  stdout: string;
  stderr: string;
  /** The program's exit code; `null` when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended the program (`SIGKILL` after a timeout), or `null`. */
  signal: string | null;
  /** True when the program ran past its timeout and was killed. */
  timedOut: boolean;
  /** True when stdout or stderr printed more than the cap and the rest was dropped. */
  truncated: boolean;
  durationMs: number;
}

/** Rejects NUL, which no argument of a process can carry. */
const WITHOUT_NUL = "^[^\\u0000]*$";

/** JSON Schema of {@link RunCodeInput}. */
export const RUN_CODE_INPUT_SCHEMA = {
  type: "object",
  properties: {
    language: {
      type: "string",
      enum: [...RUN_CODE_LANGUAGES],
      description:
        "javascript runs as an ES module under node; python runs under python3 when the image has it",
    },
    code: {
      type: "string",
      minLength: 1,
      maxLength: MAX_CODE_LENGTH,
      description: "The program's source",
    },
    stdin: {
      type: "string",
      maxLength: MAX_CODE_LENGTH,
      description: "Written to the program's standard input, which is then closed (default: empty)",
    },
    args: {
      type: "array",
      items: { type: "string", maxLength: MAX_ARGUMENT_LENGTH, pattern: WITHOUT_NUL },
      maxItems: MAX_ARGUMENTS,
      description: "Command-line arguments (process.argv.slice(2) in JavaScript, sys.argv[1:] in Python)",
    },
    timeoutMs: {
      type: "integer",
      minimum: MIN_PROGRAM_TIMEOUT_MS,
      maximum: MAX_PROGRAM_TIMEOUT_MS,
      description: "How long the program may run before it is killed (default 10000)",
    },
  },
  required: ["language", "code"],
  additionalProperties: false,
} as const;

/** JSON Schema of {@link RunCodeOutput}. */
export const RUN_CODE_OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    stdout: { type: "string" },
    stderr: { type: "string" },
    exitCode: { type: ["integer", "null"] },
    signal: { type: ["string", "null"] },
    timedOut: { type: "boolean" },
    truncated: { type: "boolean" },
    durationMs: { type: "number", minimum: 0 },
  },
  required: ["stdout", "stderr", "exitCode", "signal", "timedOut", "truncated", "durationMs"],
  additionalProperties: false,
} as const;

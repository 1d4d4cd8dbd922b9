import pc from "picocolors";
import yoctoSpinner from "yocto-spinner";
import { formatErrorLine } from "./format-error-line.js";

/** Colour functions (no-ops when colours are off). */
export type Colors = ReturnType<typeof pc.createColors>;

/** A progress line on stderr; does nothing when stderr is not a terminal. */
export interface Progress {
  /** Whether anything is shown: false off a terminal, where updates are not worth computing. */
  readonly live: boolean;
  update(text: string): void;
  stop(): void;
}

/** Where a command writes: program output on stdout, everything else (progress, warnings, errors) on stderr. */
export interface Terminal {
  /** Colours for stdout. */
  readonly colors: Colors;
  /** Colours for stderr. */
  readonly diagnosticColors: Colors;
  /** Writes one line of program output to stdout. */
  print(line: string): void;
  /** Writes a value as indented JSON to stdout. */
  printJson(value: unknown): void;
  /** Writes one line to stderr. */
  printDiagnostic(line: string): void;
  /** `warning CODE: message` on stderr. */
  warn(code: string, message: string): void;
  /** `error CODE: message` on stderr. */
  fail(error: unknown): void;
  /** Starts a spinner line on stderr (only when stderr is a terminal). */
  progress(text: string): Progress;
  /** Whether stdout is a terminal a view can be redrawn on (`executions --watch`). */
  readonly interactive: boolean;
  /** Replaces what the screen shows with `lines` (stdout); only meaningful when `interactive`. */
  redraw(lines: string[]): void;
}

/**
 * Colours follow `NO_COLOR` and `FORCE_COLOR` (through picocolors), and otherwise whether the
 * stream is a terminal: piped output (and tests, CI logs) stays plain.
 */
function colorsFor(stream: NodeJS.WriteStream): Colors {
  const forced = "FORCE_COLOR" in process.env && process.env.FORCE_COLOR !== "0";
  const enabled =
    !("NO_COLOR" in process.env) && (forced || (stream.isTTY === true && process.env.TERM !== "dumb"));
  return pc.createColors(enabled);
}

const NO_PROGRESS: Progress = { live: false, update() {}, stop() {} };

/** Cursor home, then clear the screen: the whole view is written again. */
const CLEAR_SCREEN = "\x1b[H\x1b[2J";

/** The process's terminal. */
export function createTerminal(): Terminal {
  const colors = colorsFor(process.stdout);
  const diagnosticColors = colorsFor(process.stderr);
  let spinner: ReturnType<typeof yoctoSpinner> | undefined;
  const printDiagnostic = (line: string) => {
    // A spinner redraws its own line: clear it so the diagnostic does not land in the middle.
    spinner?.clear();
    process.stderr.write(`${line}\n`);
  };
  return {
    colors,
    diagnosticColors,
    print: (line) => {
      spinner?.clear();
      process.stdout.write(`${line}\n`);
    },
    printJson: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    interactive: process.stdout.isTTY === true && process.env.TERM !== "dumb",
    redraw: (lines) => {
      spinner?.clear();
      process.stdout.write(`${CLEAR_SCREEN}${lines.map((line) => `${line}\n`).join("")}`);
    },
    printDiagnostic,
    warn: (code, message) =>
      printDiagnostic(formatErrorLine(diagnosticColors.yellow("warning"), code, message, diagnosticColors)),
    fail: (error) =>
      printDiagnostic(formatErrorLine(diagnosticColors.red("error"), error, undefined, diagnosticColors)),
    progress(text) {
      if (process.stderr.isTTY !== true || process.env.TERM === "dumb") return NO_PROGRESS;
      // The spinner hides the cursor; on Ctrl-C it shows it again and exits — unless the command
      // handles the signal itself (dev, serve, mcp close cleanly), which then must not be cut short.
      const handleSignals = process.listenerCount("SIGINT") === 0;
      const started = yoctoSpinner({ text, stream: process.stderr, handleSignals }).start();
      spinner = started;
      return {
        live: true,
        update: (next) => {
          started.text = next;
        },
        stop: () => {
          started.stop();
          if (spinner === started) spinner = undefined;
        },
      };
    },
  };
}

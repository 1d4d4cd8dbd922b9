import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { displayPath } from "@skillbox/loader/internal";

/** How long one package's typecheck may take before it is given up (and reported as a warning). */
const TYPECHECK_TIMEOUT_MS = 120_000;

/** A type error tsc reported, with its place. */
export interface TypeDiagnostic {
  /** Absolute path of the file. */
  file: string;
  /** `<file>:<line>:<column>: error TS2322: …`, the file as messages name it. */
  message: string;
}

/** What typechecking a package found. */
export type TypecheckResult =
  | { status: "skipped"; reason: string }
  | { status: "checked"; diagnostics: TypeDiagnostic[] };

/**
 * The `tsc` the package would use: from its own node_modules (or a folder above it), else from
 * the project `skillbox` runs in. Undefined when neither has TypeScript installed.
 */
function findTsc(root: string, projectRoot: string): string | undefined {
  for (const base of [root, projectRoot]) {
    try {
      // TypeScript's package.json has no `exports`: its bin file resolves by path.
      return createRequire(join(base, "package.json")).resolve("typescript/bin/tsc");
    } catch {
      // Not installed here: try the next place.
    }
  }
  return undefined;
}

/** `index.ts(3,7): error TS2322: …` (tsc's `--pretty false` format), paths relative to `root`. */
const DIAGNOSTIC_LINE = /^(.+?)\((\d+),(\d+)\): (error TS\d+: .*)$/;

function diagnosticsOf(output: string, root: string): TypeDiagnostic[] {
  const diagnostics: TypeDiagnostic[] = [];
  for (const line of output.split("\n")) {
    const match = DIAGNOSTIC_LINE.exec(line.trimEnd());
    if (match !== null) {
      const [, file, row, column, text] = match as unknown as [string, string, string, string, string];
      const path = resolve(root, file);
      diagnostics.push({ file: path, message: `${displayPath(path)}:${row}:${column}: ${text}` });
    } else if (line.startsWith(" ") && diagnostics.length > 0) {
      // A continuation of the previous message (an elaboration of the mismatch).
      diagnostics[diagnostics.length - 1]!.message += ` ${line.trim()}`;
    } else if (/^error TS\d+:/.test(line)) {
      // A project-level error (a bad tsconfig.json): it names no file, so the tsconfig it is.
      diagnostics.push({
        file: join(root, "tsconfig.json"),
        message: `${displayPath(join(root, "tsconfig.json"))}: ${line.trim()}`,
      });
    }
  }
  return diagnostics;
}

/**
 * Typechecks the package in `root` with its `tsconfig.json` (`tsc --noEmit -p`), bounded by a
 * timeout. Skipped, with the reason, when the package has no tsconfig.json, when no TypeScript
 * is installed for it, or when tsc does not finish in time.
 */
export function typecheckPackage(
  root: string,
  options: { projectRoot?: string; timeoutMs?: number } = {},
): Promise<TypecheckResult> {
  const config = join(root, "tsconfig.json");
  if (!existsSync(config)) return Promise.resolve({ status: "skipped", reason: "no tsconfig.json" });
  const tsc = findTsc(root, resolve(options.projectRoot ?? process.cwd()));
  if (tsc === undefined) {
    return Promise.resolve({
      status: "skipped",
      reason: `${displayPath(config)}: not typechecked, TypeScript is not installed (add \`typescript\` to the package's devDependencies, or the project's, and install)`,
    });
  }
  const timeoutMs = options.timeoutMs ?? TYPECHECK_TIMEOUT_MS;
  return new Promise((settle) => {
    execFile(
      process.execPath,
      [tsc, "--noEmit", "--pretty", "false", "-p", config],
      { cwd: root, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => {
        if (error?.killed) {
          settle({
            status: "skipped",
            reason: `${displayPath(config)}: not typechecked, tsc did not finish in ${timeoutMs / 1000} s`,
          });
          return;
        }
        const diagnostics = diagnosticsOf(stdout, root);
        if (error !== null && diagnostics.length === 0) {
          // tsc failed without a diagnostic it could place (it crashed, or cannot start).
          diagnostics.push({
            file: config,
            message: `${displayPath(config)}: tsc failed: ${(stdout.trim() || error.message).split("\n")[0]}`,
          });
        }
        settle({ status: "checked", diagnostics });
      },
    );
  });
}

import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { SkillboxError } from "@skillbox/core";
import type { RunCodeLanguage } from "./run-code-schemas.ts";

/** How to start a program of one language: `file`, then `args`, then the script and its arguments. */
export interface Interpreter {
  file: string;
  args: string[];
  /** The script's file name, whose extension tells the interpreter what it holds. */
  scriptName: string;
}

/** The PATH of a sandbox whose image declares none. */
const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on `searchPath`, or `undefined`. */
export function findOnPath(name: string, searchPath: string): string | undefined {
  for (const folder of searchPath.split(":")) {
    if (folder === "") continue;
    const candidate = join(folder, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The interpreter of `language` inside the sandbox. JavaScript runs under the node that runs
 * this handler (every image that can run the handler has it), as an ES module; Python under
 * `python3` from the PATH, isolated from `PYTHON*` variables and user site-packages (`-I`) and
 * unbuffered (`-u`), so what it printed before a timeout is not lost. Throws
 * `LANGUAGE_UNAVAILABLE` when the image has no such interpreter.
 */
export function findInterpreter(
  language: RunCodeLanguage,
  searchPath = process.env.PATH ?? FALLBACK_PATH,
): Interpreter {
  if (language === "javascript") return { file: process.execPath, args: [], scriptName: "main.mjs" };
  const python = findOnPath("python3", searchPath);
  if (python === undefined) {
    throw new SkillboxError(
      "LANGUAGE_UNAVAILABLE",
      `run-code: the sandbox image has no python3 on its PATH (${searchPath}); set \`sandbox.image\` in ` +
        'run-code\'s skill.json to an image with both node and python3, or run the code as "javascript"',
      { data: { language, interpreter: "python3", path: searchPath }, retryable: false },
    );
  }
  return { file: python, args: ["-I", "-u"], scriptName: "main.py" };
}

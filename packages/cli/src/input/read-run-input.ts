import { readFile } from "node:fs/promises";
import { usageError } from "../usage-error.js";

/** Where `skillbox run` takes its input from. */
export interface RunInputOptions {
  /** `--input`: the JSON text. */
  input?: string;
  /** `--input-file`: a JSON file, `-` for stdin. */
  inputFile?: string;
}

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string, origin: string): unknown {
  // Nothing at all means "no input": skills whose schema requires fields say so themselves.
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError("INPUT_INVALID", `${origin} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The input of `skillbox run`: `--input`, else `--input-file` (`-` is stdin), else stdin when it
 * is piped, else `{}`. Never waits on a terminal for input nobody is going to type.
 */
export async function readRunInput(options: RunInputOptions): Promise<unknown> {
  if (options.input !== undefined && options.inputFile !== undefined) {
    throw usageError("USAGE", "give the input either with --input or with --input-file, not both");
  }
  if (options.input !== undefined) return parseJson(options.input, "--input");
  if (options.inputFile === "-") return parseJson(await readStandardInput(), "stdin");
  if (options.inputFile !== undefined) {
    let text: string;
    try {
      text = await readFile(options.inputFile, "utf8");
    } catch (error) {
      throw usageError(
        "INPUT_INVALID",
        `cannot read --input-file ${options.inputFile}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return parseJson(text, options.inputFile);
  }
  if (process.stdin.isTTY !== true) return parseJson(await readStandardInput(), "stdin");
  return {};
}

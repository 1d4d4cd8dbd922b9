import { readFile } from "node:fs/promises";
import { SkillboxError } from "@skillbox/core";
import { createJiti } from "jiti";
import { displayPath } from "../manifest/read-package.js";

const ERROR_MARKER = "exports.__JITI_ERROR__ = ";

/**
 * Transpiles a handler module without running it and throws `HANDLER_INVALID` on a syntax error.
 * Used for skills that run outside the host (worker threads, containers): their code must not
 * be evaluated here, but a broken edit should still be caught before it replaces the last good
 * version.
 */
export async function checkSyntax(path: string): Promise<void> {
  const source = await readFile(path, "utf8");
  const jiti = createJiti(path, { fsCache: false, moduleCache: false });
  const output = jiti.transform({ source, filename: path, ts: /\.[cm]?tsx?$/.test(path) });
  const markerAt = output.indexOf(ERROR_MARKER);
  if (markerAt === -1) return;
  const detail = JSON.parse(
    output
      .slice(markerAt + ERROR_MARKER.length)
      .split("\n")[0]!
      .replace(/;$/, ""),
  ) as {
    line?: number;
    column?: number;
    message?: string;
  };
  throw new SkillboxError(
    "HANDLER_INVALID",
    `${displayPath(path)}:${detail.line ?? "?"}:${detail.column ?? "?"}: syntax error: ${detail.message ?? "unexpected token"}`,
    { data: { file: path } },
  );
}

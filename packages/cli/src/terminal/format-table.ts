import { stripVTControlCharacters } from "node:util";
import type { Colors } from "./terminal.js";

/**
 * Lays rows out in columns padded to the widest cell (colour codes do not count), with a dim
 * header line. The last column is not padded, so long descriptions do not add trailing space.
 */
export function formatTable(headers: string[], rows: string[][], colors: Colors): string[] {
  const width = (text: string) => stripVTControlCharacters(text).length;
  const widths = headers.map((header, column) =>
    Math.max(width(header), ...rows.map((row) => width(row[column] ?? ""))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell + " ".repeat((widths[column] ?? 0) - width(cell)),
      )
      .join("  ")
      .trimEnd();
  return [colors.dim(line(headers)), ...rows.map(line)];
}

/** Shortens `text` to `limit` characters with an ellipsis. */
export function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

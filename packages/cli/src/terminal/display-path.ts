import { relative } from "node:path";

/** A path for messages: relative to the working directory when it is inside it, else absolute. */
export function displayPath(path: string): string {
  const fromWorkingDirectory = relative(process.cwd(), path);
  return fromWorkingDirectory !== "" && !fromWorkingDirectory.startsWith("..") ? fromWorkingDirectory : path;
}

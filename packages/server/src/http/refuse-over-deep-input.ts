import { findOverDeepPath } from "@skillbox/core/internal";
import { requestInvalid } from "./http-error.js";

/**
 * Refuses (400) an `input` body field (of an execute or an approval) nested deeper than the
 * executor accepts, before it runs. The executor would refuse it too, but recording that refusal
 * is for callers that reach it in-process: a body thousands deep is a malformed request, and
 * answering it must not walk it recursively.
 */
export function refuseOverDeepInput(input: unknown, maxDepth: number): void {
  const path = findOverDeepPath(input, maxDepth, "input");
  if (path === undefined) return;
  throw requestInvalid(
    `\`input\` nests objects and arrays deeper than ${maxDepth} levels (at ${path}); send a flatter value`,
    { path, maxDepth },
  );
}

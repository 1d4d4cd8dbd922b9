import { findOverDeepPath } from "@skillbox/core/internal";
import { requestInvalid } from "./http-error.js";

/**
 * Refuses (400) an input nested deeper than the executor accepts, before it runs. The executor
 * would refuse it too, but recording that refusal is for callers that reach it in-process: a
 * body thousands deep is a malformed request, and answering it must not walk it recursively.
 * `field` names the body field in the message (`input` of an execute or an approval).
 */
export function refuseOverDeepInput(input: unknown, maxDepth: number, field = "input"): void {
  const path = findOverDeepPath(input, maxDepth, field);
  if (path === undefined) return;
  throw requestInvalid(
    `\`${field}\` nests objects and arrays deeper than ${maxDepth} levels (at ${path}); send a flatter value`,
    { path, maxDepth },
  );
}

import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { ExecutionProgress } from "@skillbox/core";
import { EXECUTION_META_KEY } from "./skill-to-tool.js";

/**
 * The `onProgress` of one tool call with a progress token: each report becomes
 * `notifications/progress` for that token (`progress`, `total` and `message` as the handler
 * gave them, the execution id under `_meta["skillbox/executionId"]`), sent through the request's
 * `extra.sendNotification` so a Streamable HTTP session routes it to the call's own stream.
 *
 * The spec says progress must increase with each notification: a report that does not (a
 * handler restarting its count) is not sent. A send that fails (the client went away) is
 * dropped; the execution's end decides what the call answers.
 */
export function progressNotifier(
  progressToken: ProgressToken,
  sendNotification: (notification: ServerNotification) => Promise<void>,
): (progress: ExecutionProgress, executionId: string) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (progress, executionId) => {
    if (!(progress.progress > last)) return;
    last = progress.progress;
    sendNotification({
      method: "notifications/progress",
      params: {
        progressToken,
        progress: progress.progress,
        ...(progress.total === undefined ? {} : { total: progress.total }),
        ...(progress.message === undefined ? {} : { message: progress.message }),
        _meta: { [EXECUTION_META_KEY]: executionId },
      },
    }).catch(() => {
      // The connection closed: nobody is left to tell.
    });
  };
}

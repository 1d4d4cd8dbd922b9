import type { SkillExecutor } from "@skillbox/core";
import { formatProgress } from "./format-progress.js";
import type { Progress } from "./terminal.js";

/**
 * Keeps `progress` (a spinner line on stderr) showing how execution `id` is doing: its status
 * while it waits (`queued`, `awaiting approval`) and a bar of its latest `ctx.progress()` report
 * once it runs. Off a terminal it subscribes to nothing. Returns the function that stops it.
 */
export function followProgress(
  executor: SkillExecutor,
  id: string,
  progress: Progress,
  label: string,
): () => void {
  if (!progress.live) return () => {};
  const controller = new AbortController();
  void (async () => {
    try {
      for await (const event of executor.events(id, { signal: controller.signal })) {
        if (event.type === "progress") progress.update(`${label} ${formatProgress(event.progress)}`);
        else if (event.type === "status") {
          const reason = event.execution.approval?.reason;
          progress.update(
            event.status === "awaiting_approval"
              ? `${label} awaiting approval${reason === undefined ? "" : `: ${reason}`} (skillbox approve ${id})`
              : `${label} ${event.status}`,
          );
        }
      }
    } catch {
      // Aborted once the command has its answer, or the stream failed: the bar only informs.
    }
  })();
  return () => controller.abort();
}

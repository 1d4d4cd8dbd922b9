import type { ExecutionProgress } from "../api/api-types.js";
import { formatTime } from "../format.js";

/** The handler's last progress report, as a bar with its text (indeterminate without a total). */
export function ExecutionProgressBar({ progress }: { progress: ExecutionProgress }) {
  const { total } = progress;
  const bounded = total !== undefined && total > 0;
  const text = bounded
    ? `${progress.progress} of ${total} (${Math.round((Math.min(progress.progress, total) / total) * 100)} %)`
    : `${progress.progress}`;
  return (
    <div class="execution-progress">
      {bounded ? (
        <progress
          value={Math.min(progress.progress, total)}
          max={total}
          aria-label="Progress"
          aria-describedby="execution-progress-text"
        />
      ) : (
        <progress aria-label="Progress" aria-describedby="execution-progress-text" />
      )}
      <span id="execution-progress-text" data-progress-text>
        {text}
        {progress.message === undefined ? "" : ` — ${progress.message}`}
      </span>
      <span class="muted">
        reported <time dateTime={progress.at}>{formatTime(progress.at)}</time>
      </span>
    </div>
  );
}

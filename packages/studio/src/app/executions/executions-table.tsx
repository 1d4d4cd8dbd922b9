import type { ExecutionSummary } from "../api/api-types.js";
import { StatusBadge } from "../components/status-badge.js";
import { formatDuration, formatTime } from "../format.js";
import { href } from "../router/hash-route.js";
import { JsonPreviewText } from "./json-preview-text.js";
import { shortExecutionId } from "./short-execution-id.js";

/**
 * A table of execution summaries, one `tr[data-execution-id]` per execution with a link to its
 * page. `compact` leaves out the owner, session and previews (a parent's children).
 */
export function ExecutionsTable({
  executions,
  caption,
  empty,
  compact = false,
}: {
  executions: ExecutionSummary[];
  /** The table's accessible name ("Executions"). */
  caption: string;
  /** Said in the table when it has no rows. */
  empty: string;
  compact?: boolean;
}) {
  const columns = compact ? 7 : 11;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
    <section class="table-scroll" tabIndex={0} aria-label={`${caption} (scrollable)`}>
      <table class="executions-table" aria-label={caption}>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Skill</th>
            <th scope="col">Execution</th>
            {compact ? null : <th scope="col">Owner</th>}
            {compact ? null : <th scope="col">Session</th>}
            <th scope="col">Created</th>
            <th scope="col" class="number">
              Duration
            </th>
            <th scope="col" class="number">
              Attempts
            </th>
            {compact ? null : <th scope="col">Input</th>}
            {compact ? null : <th scope="col">Output</th>}
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {/* The table stays when it is empty: the live rows arrive into it. */}
          {executions.length === 0 ? (
            <tr>
              <td colSpan={columns} class="empty">
                {empty}
              </td>
            </tr>
          ) : null}
          {executions.map((execution) => (
            <tr key={execution.id} data-execution-id={execution.id} data-status={execution.status}>
              <td>
                <StatusBadge status={execution.status} />
              </td>
              <td class="nowrap">
                {execution.skillName}
                <span class="muted">@{execution.skillVersion}</span>
              </td>
              <td>
                <a href={href(["executions", execution.id])} title={execution.id}>
                  <code>{shortExecutionId(execution.id)}</code>
                </a>
              </td>
              {compact ? null : <td>{execution.apiKeyId}</td>}
              {compact ? null : <td>{execution.sessionId ?? <span class="empty">—</span>}</td>}
              <td class="nowrap">
                <time dateTime={execution.createdAt}>{formatTime(execution.createdAt)}</time>
              </td>
              <td class="number">{formatDuration(execution.duration)}</td>
              <td class="number">{execution.attempts}</td>
              {compact ? null : (
                <td>
                  <JsonPreviewText preview={execution.inputPreview} />
                </td>
              )}
              {compact ? null : (
                <td>
                  <JsonPreviewText preview={execution.outputPreview} />
                </td>
              )}
              <td>
                {execution.error === null ? (
                  <span class="empty">—</span>
                ) : (
                  <code class="error-code" title={execution.error.message}>
                    {execution.error.code}
                  </code>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

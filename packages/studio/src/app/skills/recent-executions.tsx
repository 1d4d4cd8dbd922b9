import type { LiveEvent } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { StatusBadge } from "../components/status-badge.js";
import { shortExecutionId } from "../executions/short-execution-id.js";
import { formatAgo, formatDuration, formatTime } from "../format.js";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { href } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";

/** How many of a skill's executions its page lists. */
const SHOWN = 10;

/** The caller's latest executions of one skill, kept current by the live stream. */
export function RecentExecutions({ name }: { name: string }) {
  const { api } = useStudio();
  const listing = useApi((signal) => api.listExecutions({ skill: name, limit: SHOWN }, signal), [name]);
  const relist = useCoalesced(listing.reload);
  useLiveEvent((event: LiveEvent) => {
    if (event.type === "resync") relist();
    else if ((event.type === "status" || event.type === "finished") && event.execution.skillName === name)
      relist();
  });
  const page = listing.data;
  return (
    <section aria-labelledby="recent-executions-title">
      <h2 id="recent-executions-title">Recent executions</h2>
      {listing.error === undefined ? null : (
        <ErrorNotice error={listing.error} title="Cannot list executions" />
      )}
      {page === undefined ? (
        listing.loading ? (
          <p class="loading-inline">Loading executions…</p>
        ) : null
      ) : page.executions.length === 0 ? (
        <p class="empty">No executions of {name} yet: run it above.</p>
      ) : (
        <>
          <table aria-label={`Recent executions of ${name}`}>
            <thead>
              <tr>
                <th scope="col">Execution</th>
                <th scope="col">Status</th>
                <th scope="col">Version</th>
                <th scope="col">Started</th>
                <th scope="col" class="number">
                  Duration
                </th>
              </tr>
            </thead>
            <tbody>
              {page.executions.map((execution) => (
                <tr key={execution.id} data-execution-id={execution.id}>
                  <td>
                    <a href={href(["executions", execution.id])} title={execution.id}>
                      <code>{shortExecutionId(execution.id)}</code>
                    </a>
                  </td>
                  <td>
                    <StatusBadge status={execution.status} />
                  </td>
                  <td>{execution.skillVersion}</td>
                  <td>
                    <time dateTime={execution.createdAt} title={formatTime(execution.createdAt)}>
                      {formatAgo(execution.createdAt)}
                    </time>
                  </td>
                  <td class="number">{formatDuration(execution.duration)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.total > page.executions.length ? (
            <p>
              <a href={href(["executions"], { skill: name })}>
                All {page.total} executions of {name}
              </a>
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

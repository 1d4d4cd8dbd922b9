import type { LiveEvent } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { ExecutionFiltersForm } from "../executions/execution-filters-form.js";
import {
  EXECUTIONS_PAGE_SIZE,
  type ExecutionQuery,
  hasExecutionFilters,
  matchesExecutionQuery,
  readExecutionQuery,
  toExecutionFilters,
  writeExecutionQuery,
} from "../executions/execution-query.js";
import { ExecutionsTable } from "../executions/executions-table.js";
import { Pagination } from "../executions/pagination.js";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import { href, navigate, type Route } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";
import "../executions/executions.css";

/**
 * The caller's executions, newest first: filters in the route's query (a filtered view is a
 * link), one server-side page of 50 per request however many there are, kept current by the
 * live stream without reloading the page.
 */
export function ExecutionsPage({ route }: { route: Route }) {
  usePageTitle("Executions");
  const { api } = useStudio();
  const query = readExecutionQuery(route.query);
  const filters = toExecutionFilters(query);
  const filterKey = JSON.stringify(filters);
  const listing = useApi((signal) => api.listExecutions(filters, signal), [api, filterKey]);
  const relist = useCoalesced(listing.reload);

  useLiveEvent((event: LiveEvent) => {
    if (event.type === "resync" || event.type === "lagged") {
      relist();
      return;
    }
    if (event.type !== "status" && event.type !== "finished") return;
    // A row on this page changed; or, on the first page, a new execution may belong at its top.
    const shown = listing.data?.executions.some((execution) => execution.id === event.executionId) ?? false;
    const arrives =
      query.offset === 0 && (!hasExecutionFilters(query) || matchesExecutionQuery(event.execution, query));
    if (shown || arrives) relist();
  });

  const go = (next: ExecutionQuery) =>
    navigate(href(["executions"], writeExecutionQuery(next)), { replace: true });
  const page = listing.data;

  return (
    <section class="executions-page">
      <h1>Executions</h1>
      <ExecutionFiltersForm query={query} onChange={(changed) => go({ ...changed, offset: 0 })} />
      {listing.error === undefined ? null : (
        <ErrorNotice error={listing.error} title="The executions could not be listed" />
      )}
      {page === undefined ? (
        listing.error === undefined ? (
          <p class="loading">Loading executions…</p>
        ) : null
      ) : (
        <>
          <ExecutionsTable
            executions={page.executions}
            caption="Executions"
            empty={
              hasExecutionFilters(query)
                ? "No execution matches these filters."
                : query.offset > 0
                  ? "There are no executions this far back."
                  : "No executions yet: run a skill from its page, the API, MCP or the CLI and it appears here."
            }
          />
          <Pagination
            offset={page.offset}
            shown={page.executions.length}
            total={page.total}
            nextOffset={page.nextOffset}
            pageSize={EXECUTIONS_PAGE_SIZE}
            label="executions"
            onOffset={(offset) => go({ ...query, offset })}
          />
        </>
      )}
    </section>
  );
}

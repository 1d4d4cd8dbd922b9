import { useState } from "preact/hooks";
import type { ExecutionRecord, LiveEvent } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { ApprovalButtons } from "../executions/approval-buttons.js";
import { JsonPreviewText } from "../executions/json-preview-text.js";
import { NotApproverNotice } from "../executions/not-approver-notice.js";
import { Pagination } from "../executions/pagination.js";
import { shortExecutionId } from "../executions/short-execution-id.js";
import { formatTime } from "../format.js";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import { href, type Route } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";
import "../executions/executions.css";

const PAGE_SIZE = 50;

/**
 * The inbox of executions waiting for a decision (`awaiting_approval`), newest first, kept
 * current by the live stream. Approvers decide here; others see why they cannot.
 */
export function ApprovalsPage(_props: { route: Route }) {
  usePageTitle("Approvals");
  const { api, caller } = useStudio();
  const [offset, setOffset] = useState(0);
  const listing = useApi(
    (signal) => api.listExecutions({ status: "awaiting_approval", limit: PAGE_SIZE, offset }, signal),
    [api, offset],
  );
  const relist = useCoalesced(listing.reload);

  useLiveEvent((event: LiveEvent) => {
    if (event.type === "resync" || event.type === "lagged") return relist();
    if (event.type !== "status" && event.type !== "finished") return;
    // One arrives (it now awaits a decision) or one shown leaves (decided, cancelled, expired).
    const shown = listing.data?.executions.some((execution) => execution.id === event.executionId) ?? false;
    if (shown || event.execution.status === "awaiting_approval") relist();
  });

  const onDecided = (_execution: ExecutionRecord) => listing.reload();
  const page = listing.data;
  const pagination =
    page === undefined ? null : (
      <Pagination
        offset={page.offset}
        shown={page.executions.length}
        total={page.total}
        nextOffset={page.nextOffset}
        pageSize={PAGE_SIZE}
        label="pending approvals"
        onOffset={setOffset}
      />
    );

  return (
    <section class="approvals-page">
      <h1>Approvals</h1>
      <p class="muted">
        Executions of skills that need a person's decision before they run (
        <code>"approval": "required"</code> or an interceptor's <code>requireApproval()</code>). Approved,
        they run; rejected, they end <code>rejected</code>.
      </p>
      {caller.approver ? null : <NotApproverNotice caller={caller} />}
      {listing.error === undefined ? null : (
        <ErrorNotice error={listing.error} title="The pending approvals could not be listed" />
      )}
      {page === undefined ? (
        listing.error === undefined ? (
          <p class="loading">Loading the pending approvals…</p>
        ) : null
      ) : page.executions.length === 0 && page.offset === 0 ? (
        <p class="empty">Nothing awaits a decision.</p>
      ) : page.executions.length === 0 ? (
        <>
          {/* Decisions can empty a later page: the way back stays. */}
          <p class="empty">No pending approvals this far back.</p>
          {pagination}
        </>
      ) : (
        <>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard. */}
          <section class="table-scroll" tabIndex={0} aria-label="Pending approvals (scrollable)">
            <table class="approvals-table" aria-label="Pending approvals">
              <thead>
                <tr>
                  <th scope="col">Skill</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Requested by</th>
                  <th scope="col">Requested at</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Input</th>
                  <th scope="col">Execution</th>
                  {caller.approver ? <th scope="col">Decision</th> : null}
                </tr>
              </thead>
              <tbody>
                {page.executions.map((execution) => (
                  <tr key={execution.id} data-execution-id={execution.id}>
                    <td class="nowrap">
                      {execution.skillName}
                      <span class="muted">@{execution.skillVersion}</span>
                    </td>
                    <td>{execution.approval?.reason ?? <span class="empty">—</span>}</td>
                    <td>{execution.approval?.requestedBy ?? execution.apiKeyId}</td>
                    <td class="nowrap">
                      {formatTime(execution.approval?.requestedAt ?? execution.createdAt)}
                    </td>
                    <td class="nowrap">
                      {execution.approval?.expiresAt == null
                        ? "never"
                        : formatTime(execution.approval.expiresAt)}
                    </td>
                    <td>
                      <JsonPreviewText preview={execution.inputPreview} />
                    </td>
                    <td>
                      <a href={href(["executions", execution.id])} title={execution.id}>
                        <code>{shortExecutionId(execution.id)}</code>
                      </a>
                    </td>
                    {caller.approver ? (
                      <td>
                        <ApprovalButtons execution={execution} onDecided={onDecided} />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          {pagination}
        </>
      )}
    </section>
  );
}

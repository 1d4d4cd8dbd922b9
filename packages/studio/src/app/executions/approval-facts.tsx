import type { ExecutionApproval } from "../api/api-types.js";
import { formatTime } from "../format.js";

/** What was asked and decided about running an execution. */
export function ApprovalFacts({ approval }: { approval: ExecutionApproval }) {
  return (
    <dl class="facts" aria-label="Approval">
      <dt>Reason</dt>
      <dd data-approval-reason>{approval.reason}</dd>
      <dt>Requested by</dt>
      <dd>{approval.requestedBy}</dd>
      <dt>Requested at</dt>
      <dd>
        <time dateTime={approval.requestedAt}>{formatTime(approval.requestedAt)}</time>
      </dd>
      <dt>Expires</dt>
      <dd>
        {approval.expiresAt === null ? (
          <span class="muted">never</span>
        ) : (
          <time dateTime={approval.expiresAt}>{formatTime(approval.expiresAt)}</time>
        )}
      </dd>
      <dt>Decision</dt>
      <dd data-approval-decision={approval.decision ?? "pending"}>{approval.decision ?? "pending"}</dd>
      {approval.decidedBy === null ? null : (
        <>
          <dt>Decided by</dt>
          <dd>{approval.decidedBy}</dd>
        </>
      )}
      {approval.decidedAt === null ? null : (
        <>
          <dt>Decided at</dt>
          <dd>
            <time dateTime={approval.decidedAt}>{formatTime(approval.decidedAt)}</time>
          </dd>
        </>
      )}
      {approval.comment === null ? null : (
        <>
          <dt>Comment</dt>
          <dd>{approval.comment}</dd>
        </>
      )}
      {approval.decision === "approved" ? (
        <>
          <dt>Input</dt>
          <dd>{approval.inputEdited ? "changed by the approver" : "as requested"}</dd>
        </>
      ) : null}
    </dl>
  );
}

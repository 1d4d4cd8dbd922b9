import { useState } from "preact/hooks";
import type { ExecutionRecord, ExecutionSummary } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { useStudio } from "../studio-context.js";
import { useExecutionAction } from "./use-execution-action.js";

/**
 * The Approve and Reject buttons of one pending execution in a list (no comment, input as it
 * is: the execution page has the full form). The server's refusal shows under them.
 */
export function ApprovalButtons({
  execution,
  onDecided,
}: {
  execution: Pick<ExecutionSummary, "id" | "skillName">;
  onDecided: (execution: ExecutionRecord) => void;
}) {
  const { api, announce } = useStudio();
  const [decided, setDecided] = useState<string | null>(null);
  const action = useExecutionAction((answer, name) => {
    // Until the list is read again the row stays: it says what was decided, with no second try.
    setDecided(name === "approve" ? "Approved" : "Rejected");
    onDecided(answer);
    announce(`${name === "approve" ? "Approved" : "Rejected"} the execution of ${execution.skillName}`);
  });
  if (decided !== null) return <span class="muted">{decided}</span>;
  return (
    <div class="approval-buttons">
      <button
        type="button"
        disabled={action.pending !== null}
        onClick={() => void action.run("approve", () => api.approveExecution(execution.id))}
      >
        {action.pending === "approve" ? "Approving…" : "Approve"}
      </button>
      <button
        type="button"
        class="danger"
        disabled={action.pending !== null}
        onClick={() => void action.run("reject", () => api.rejectExecution(execution.id))}
      >
        {action.pending === "reject" ? "Rejecting…" : "Reject"}
      </button>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </div>
  );
}

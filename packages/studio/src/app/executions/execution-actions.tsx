import { useState } from "preact/hooks";
import { type ExecutionRecord, isFinalStatus } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { statusLabel } from "../components/status-badge.js";
import { useStudio } from "../studio-context.js";
import { NotApproverNotice } from "./not-approver-notice.js";
import { useExecutionAction } from "./use-execution-action.js";

/**
 * What may be done to one execution, through the durable-executions API: cancel it while it has
 * not ended; approve (with a comment, and optionally a changed input) or reject (with a reason)
 * while it awaits approval — approver callers only, the others are told why. `onChanged`
 * gets the record the server answered, so the page shows the new state at once.
 */
export function ExecutionActions({
  execution,
  onChanged,
  onRefused,
}: {
  execution: ExecutionRecord;
  onChanged: (execution: ExecutionRecord) => void;
  /** The server refused an action: the execution may have moved on, so the page reads it again. */
  onRefused: () => void;
}) {
  const { api, caller, announce } = useStudio();
  const action = useExecutionAction((changed, name) => {
    onChanged(changed);
    announce(`${PAST[name] ?? name}: the execution is now ${statusLabel(changed.status)}`);
  }, onRefused);
  const [comment, setComment] = useState("");
  const [editInput, setEditInput] = useState(false);
  const [inputText, setInputText] = useState(() => JSON.stringify(execution.input ?? {}, null, 2));
  const [reason, setReason] = useState("");
  const awaiting = execution.status === "awaiting_approval";
  const finished = isFinalStatus(execution.status);
  if (finished && action.error === undefined) return null;

  const approve = () => {
    let input: unknown;
    if (editInput) {
      try {
        input = JSON.parse(inputText);
      } catch (error) {
        action.fail({
          code: "INPUT_NOT_JSON",
          message: `The input to run is not JSON (${error instanceof Error ? error.message : String(error)}); fix it or untick "Change the input"`,
        });
        return;
      }
    }
    void action.run("approve", () =>
      api.approveExecution(execution.id, {
        ...(comment.trim() === "" ? {} : { comment: comment.trim() }),
        ...(editInput ? { input } : {}),
      }),
    );
  };

  return (
    <section class="card execution-actions" aria-labelledby="execution-actions-heading">
      <h2 id="execution-actions-heading">Actions</h2>
      {action.error === undefined ? null : <ErrorNotice error={action.error} title="The server refused" />}
      {awaiting && caller.approver ? (
        <div class="decision">
          <form
            class="decision-form"
            aria-label="Approval"
            onSubmit={(event) => {
              event.preventDefault();
              approve();
            }}
          >
            <div class="field">
              <label for="approve-comment">Comment (optional)</label>
              <textarea
                id="approve-comment"
                rows={2}
                maxLength={2000}
                value={comment}
                onInput={(event) => setComment(event.currentTarget.value)}
              />
            </div>
            <div class="field field-inline">
              <input
                id="approve-edit-input"
                type="checkbox"
                checked={editInput}
                onChange={(event) => setEditInput(event.currentTarget.checked)}
              />
              <label for="approve-edit-input">Change the input before it runs</label>
            </div>
            {editInput ? (
              <div class="field">
                <label for="approve-input">Input to run (JSON)</label>
                <textarea
                  id="approve-input"
                  rows={8}
                  spellcheck={false}
                  value={inputText}
                  aria-describedby="approve-input-hint"
                  onInput={(event) => setInputText(event.currentTarget.value)}
                />
                <span id="approve-input-hint" class="field-hint">
                  Replaces the input; the server checks it against the skill's input schema.
                </span>
              </div>
            ) : null}
            <button type="submit" disabled={action.pending !== null}>
              {action.pending === "approve" ? "Approving…" : "Approve"}
            </button>
          </form>
          <form
            class="decision-form"
            aria-label="Rejection"
            onSubmit={(event) => {
              event.preventDefault();
              void action.run("reject", () =>
                api.rejectExecution(execution.id, reason.trim() === "" ? undefined : reason.trim()),
              );
            }}
          >
            <div class="field">
              <label for="reject-reason">Reason (optional)</label>
              <input
                id="reject-reason"
                maxLength={2000}
                value={reason}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
            </div>
            <button type="submit" class="danger" disabled={action.pending !== null}>
              {action.pending === "reject" ? "Rejecting…" : "Reject"}
            </button>
          </form>
        </div>
      ) : null}
      {awaiting && !caller.approver ? <NotApproverNotice caller={caller} /> : null}
      {finished ? null : (
        <p>
          <button
            type="button"
            class="danger"
            disabled={action.pending !== null}
            onClick={() => void action.run("cancel", () => api.cancelExecution(execution.id))}
          >
            {action.pending === "cancel" ? "Cancelling…" : "Cancel"}
          </button>{" "}
          <span class="field-hint">
            Ends it now: a queued or waiting one never runs, a running one is stopped.
          </span>
        </p>
      )}
    </section>
  );
}

const PAST: Record<string, string> = { approve: "Approved", reject: "Rejected", cancel: "Cancelled" };

import type { ApiError } from "../api/api-error.js";
import { type ExecutionRecord, isFinalStatus } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { JsonView } from "../components/json-view.js";
import { StatusBadge } from "../components/status-badge.js";
import type { FieldIssue } from "../form/schema-fields.js";
import { formatDuration } from "../format.js";
import { href } from "../router/hash-route.js";

/** What one run from the form came to. */
export type RunOutcome =
  | { kind: "running" }
  | { kind: "execution"; execution: ExecutionRecord }
  /** 422 `INPUT_INVALID`: the schema refused the input (the execution is recorded all the same). */
  | { kind: "refused"; error: ApiError; violations: FieldIssue[]; executionId: string | undefined }
  | { kind: "failed"; error: ApiError };

/** The "Result" section of a skill page: status, output or error, duration, and the execution's link. */
export function RunResult({ outcome }: { outcome: RunOutcome }) {
  return (
    <section
      class="card run-result"
      aria-labelledby="run-result-title"
      aria-busy={outcome.kind === "running"}
    >
      <h2 id="run-result-title">Result</h2>
      <ResultBody outcome={outcome} />
    </section>
  );
}

function ResultBody({ outcome }: { outcome: RunOutcome }) {
  switch (outcome.kind) {
    case "running":
      return <p class="loading-inline">Running…</p>;
    case "failed":
      return <ErrorNotice error={outcome.error} title="The run was refused" />;
    case "refused":
      return (
        <>
          <p class="run-summary">
            <StatusBadge status="error" /> <ExecutionLink id={outcome.executionId} />
          </p>
          <ErrorNotice error={outcome.error} title="The input does not match the skill's schema" />
          {outcome.violations.length === 0 ? null : (
            <ul class="run-violations" aria-label="Schema violations">
              {outcome.violations.map((violation) => (
                <li key={`${violation.label}:${violation.message}`}>{violation.message}</li>
              ))}
            </ul>
          )}
        </>
      );
    case "execution": {
      const { execution } = outcome;
      return (
        <>
          <p class="run-summary">
            <StatusBadge status={execution.status} />
            {execution.duration === null ? null : <span>took {formatDuration(execution.duration)}</span>}
            <ExecutionLink id={execution.id} />
          </p>
          {execution.status === "awaiting_approval" ? (
            <p class="notice notice-warning">
              This skill needs approval: the execution waits for an approver's decision
              {execution.approval?.reason ? ` (${execution.approval.reason})` : ""}. It runs once approved;
              this result follows it.
            </p>
          ) : null}
          {!isFinalStatus(execution.status) && execution.status !== "awaiting_approval" ? (
            <p class="loading-inline">The execution is under way; this result follows it.</p>
          ) : null}
          {execution.error === null ? null : <ErrorNotice error={execution.error} title="The skill failed" />}
          {execution.status === "success" ? <JsonView value={execution.output} label="Output" /> : null}
        </>
      );
    }
  }
}

function ExecutionLink({ id }: { id: string | undefined }) {
  if (id === undefined) return null;
  return (
    <a href={href(["executions", id])} class="run-link">
      Open execution
    </a>
  );
}

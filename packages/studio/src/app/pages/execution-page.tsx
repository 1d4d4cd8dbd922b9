import { useEffect, useState } from "preact/hooks";
import { type ExecutionRecord, isFinalStatus, type LiveEvent } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { JsonView } from "../components/json-view.js";
import { StatusBadge } from "../components/status-badge.js";
import { ApprovalFacts } from "../executions/approval-facts.js";
import { ExecutionActions } from "../executions/execution-actions.js";
import { ExecutionFacts } from "../executions/execution-facts.js";
import { ExecutionProgressBar } from "../executions/execution-progress-bar.js";
import { ExecutionsTable } from "../executions/executions-table.js";
import { shortExecutionId } from "../executions/short-execution-id.js";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import { href, type Route } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";
import "../executions/executions.css";
import { latestRecord } from "../api/latest-record.js";

/** Children listed on the page: a handler fanning out further has them all in the executions table. */
const CHILDREN_SHOWN = 50;

/**
 * One execution: its input, output or error, attempts, timings, progress, approval, parent and
 * the executions it made with `ctx.call`, live from the event stream; and the actions (cancel,
 * approve, reject) the caller may take on it.
 */
export function ExecutionPage({ id }: { route: Route; id: string }) {
  usePageTitle(`Execution ${shortExecutionId(id)}`);
  const { api } = useStudio();
  const loaded = useApi((signal) => api.getExecution(id, signal), [api, id]);
  const children = useApi(
    (signal) => api.listExecutions({ parentExecutionId: id, limit: CHILDREN_SHOWN }, signal),
    [api, id],
  );
  const [execution, setExecution] = useState<ExecutionRecord | undefined>(undefined);
  const relistChildren = useCoalesced(children.reload);
  // `lagged` can come with every event of a storm: one read per burst, not one per notice.
  const reread = useCoalesced(loaded.reload);

  useEffect(() => setExecution(undefined), [id]);
  useEffect(() => {
    const answer = loaded.data;
    if (answer !== undefined) setExecution((current) => latestRecord(current, answer));
  }, [loaded.data]);

  useLiveEvent((event: LiveEvent) => {
    switch (event.type) {
      case "resync":
      case "lagged":
        reread();
        relistChildren();
        return;
      case "status":
        if (event.executionId === id) setExecution((current) => latestRecord(current, event.execution));
        else if (event.execution.parentExecutionId === id) relistChildren();
        return;
      case "progress":
        if (event.executionId === id)
          setExecution((current) =>
            current === undefined ? current : { ...current, progress: event.progress },
          );
        return;
      case "finished":
        if (event.executionId === id) {
          setExecution((current) => latestRecord(current, event.execution));
          // The event's record is the caller view too; reading it again makes sure nothing is stale.
          loaded.reload();
        } else if (event.execution.parentExecutionId === id) relistChildren();
        return;
      default:
        return;
    }
  });

  if (execution === undefined) {
    return (
      <section>
        <h1>Execution</h1>
        {loaded.error === undefined ? (
          <p class="loading">Loading the execution…</p>
        ) : (
          <>
            <ErrorNotice error={loaded.error} title="This execution cannot be shown" />
            <p>
              <a href={href(["executions"])}>Back to the executions</a>
            </p>
          </>
        )}
      </section>
    );
  }

  const finished = isFinalStatus(execution.status);
  return (
    <section class="execution-page" data-execution-id={execution.id} data-status={execution.status}>
      <h1>
        Execution of {execution.skillName}
        <span class="muted">@{execution.skillVersion}</span>
      </h1>
      <p>
        <StatusBadge status={execution.status} /> <code>{execution.id}</code> ·{" "}
        <a href={href(["executions"], { skill: execution.skillName })}>
          all executions of {execution.skillName}
        </a>
      </p>
      {loaded.error === undefined ? null : (
        <ErrorNotice error={loaded.error} title="The execution could not be read again" />
      )}
      <ExecutionActions
        key={execution.id}
        execution={execution}
        onChanged={(changed) => setExecution((current) => latestRecord(current, changed))}
        onRefused={loaded.reload}
      />
      {execution.progress === null ? null : (
        <section aria-labelledby="execution-progress-heading">
          <h2 id="execution-progress-heading">Progress</h2>
          <ExecutionProgressBar progress={execution.progress} />
        </section>
      )}
      {execution.error === null ? null : (
        <section class="card execution-error" aria-labelledby="execution-error-heading">
          <h2 id="execution-error-heading">Error</h2>
          <dl class="facts">
            <dt>Code</dt>
            <dd>
              <code data-error-code>{execution.error.code}</code>
            </dd>
            <dt>Message</dt>
            <dd data-error-message>{execution.error.message}</dd>
          </dl>
          {execution.error.data === undefined ? null : (
            <JsonView value={execution.error.data} label="Error data" />
          )}
        </section>
      )}
      {execution.approval === null ? null : (
        <section aria-labelledby="execution-approval-heading">
          <h2 id="execution-approval-heading">Approval</h2>
          <ApprovalFacts approval={execution.approval} />
        </section>
      )}
      <div class="execution-summary">
        <section aria-labelledby="execution-details-heading">
          <h2 id="execution-details-heading">Details</h2>
          <ExecutionFacts execution={execution} />
        </section>
        <section aria-labelledby="execution-bodies-heading">
          <h2 id="execution-bodies-heading">Input and output</h2>
          <JsonView value={execution.input} label="Input" />
          {finished ? (
            execution.output === undefined || execution.output === null ? (
              <p class="empty">
                No output{execution.error === null ? "." : ": it ended with the error above."}
              </p>
            ) : (
              <JsonView value={execution.output} label="Output" />
            )
          ) : (
            <p class="empty">No output yet: the execution has not ended.</p>
          )}
        </section>
      </div>
      <section aria-labelledby="execution-children-heading">
        <h2 id="execution-children-heading">Child executions</h2>
        {children.error === undefined ? null : (
          <ErrorNotice error={children.error} title="The child executions could not be listed" />
        )}
        {children.data === undefined ? null : (
          <>
            <ExecutionsTable
              executions={children.data.executions}
              caption="Child executions"
              empty="None: this execution called no other skill (ctx.call)."
              compact
            />
            {children.data.total > children.data.executions.length ? (
              <p class="muted">
                The first {children.data.executions.length} of {children.data.total}.
              </p>
            ) : null}
          </>
        )}
      </section>
    </section>
  );
}

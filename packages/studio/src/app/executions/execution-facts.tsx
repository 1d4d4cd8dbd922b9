import type { ExecutionRecord } from "../api/api-types.js";
import { StatusBadge } from "../components/status-badge.js";
import { formatDuration, formatTime } from "../format.js";
import { href } from "../router/hash-route.js";

/** The facts of one execution: status, skill, ids, owner, session, attempts, timings, trace. */
export function ExecutionFacts({ execution }: { execution: ExecutionRecord }) {
  return (
    <dl class="facts" aria-label="Details">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={execution.status} />
      </dd>
      <dt>Skill</dt>
      <dd>
        <a href={href(["skills", execution.skillName])}>{execution.skillName}</a>
        <span class="muted">@{execution.skillVersion}</span>
      </dd>
      <dt>Execution id</dt>
      <dd>
        <code data-execution-id={execution.id}>{execution.id}</code>
      </dd>
      <dt>Owner</dt>
      <dd>{execution.apiKeyId}</dd>
      <dt>Session</dt>
      <dd>
        {execution.sessionId === null ? <span class="muted">none</span> : <code>{execution.sessionId}</code>}
      </dd>
      <dt>Idempotency key</dt>
      <dd>
        {execution.idempotencyKey === null ? (
          <span class="muted">none</span>
        ) : (
          <code>{execution.idempotencyKey}</code>
        )}
      </dd>
      <dt>Attempts</dt>
      <dd data-attempts>{execution.attempts}</dd>
      <dt>Created</dt>
      <dd>
        <time dateTime={execution.createdAt}>{formatTime(execution.createdAt)}</time>
      </dd>
      <dt>Finished</dt>
      <dd>
        {execution.finishedAt === null ? (
          <span class="muted">not yet</span>
        ) : (
          <time dateTime={execution.finishedAt}>{formatTime(execution.finishedAt)}</time>
        )}
      </dd>
      <dt>Duration</dt>
      <dd>{formatDuration(execution.duration)}</dd>
      <dt>Parent execution</dt>
      <dd>
        {execution.parentExecutionId === null ? (
          <span class="muted">none (called directly)</span>
        ) : (
          <a href={href(["executions", execution.parentExecutionId])} data-parent-execution>
            <code>{execution.parentExecutionId}</code>
          </a>
        )}
      </dd>
      <dt>Trace id</dt>
      <dd data-trace-id>
        {execution.traceId === null ? (
          <span class="muted">not traced</span>
        ) : (
          <code>{execution.traceId}</code>
        )}
      </dd>
      {execution.spanId === null ? null : (
        <>
          <dt>Span id</dt>
          <dd>
            <code>{execution.spanId}</code>
          </dd>
        </>
      )}
    </dl>
  );
}

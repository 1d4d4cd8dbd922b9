import { useEffect, useRef, useState } from "preact/hooks";
import { EXECUTION_STATUSES, type ExecutionStatus } from "../api/api-types.js";
import { statusLabel } from "../components/status-badge.js";
import { fromDateTimeLocal, toDateTimeLocal } from "../format.js";
import { useApi } from "../hooks/use-api.js";
import { useStudio } from "../studio-context.js";
import { type ExecutionQuery, hasExecutionFilters } from "./execution-query.js";

/** Typing waits this long before the table lists again: one request per pause, not per key. */
const TYPING_PAUSE_MS = 300;

type Filters = Omit<ExecutionQuery, "offset">;

/**
 * The executions table's filters: skill, status (several), session and a time range. Each
 * change goes to `onChange` (which puts it in the route); text fields after a pause in typing.
 */
export function ExecutionFiltersForm({
  query,
  onChange,
}: {
  query: ExecutionQuery;
  onChange: (filters: Filters) => void;
}) {
  const { api } = useStudio();
  const skills = useApi((signal) => api.listSkills({ signal }), [api]);
  const skill = useTypedText(query.skill, (value) => onChange({ ...query, skill: value }));
  const session = useTypedText(query.session, (value) => onChange({ ...query, session: value }));
  const names = [...new Set((skills.data ?? []).map((view) => view.name))].sort();

  return (
    <form
      class="toolbar execution-filters"
      aria-label="Filter executions"
      onSubmit={(event) => {
        event.preventDefault();
        skill.flush();
        session.flush();
      }}
    >
      <div class="field">
        <label for="filter-skill">Skill</label>
        <input
          id="filter-skill"
          type="search"
          list="filter-skill-names"
          autocomplete="off"
          value={skill.value}
          onInput={(event) => skill.type(event.currentTarget.value)}
        />
        <datalist id="filter-skill-names">
          {names.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select
          id="filter-status"
          multiple
          size={4}
          aria-describedby="filter-status-hint"
          onChange={(event) => {
            const statuses = [...event.currentTarget.selectedOptions].map(
              (option) => option.value as ExecutionStatus,
            );
            onChange({ ...query, statuses });
          }}
        >
          {EXECUTION_STATUSES.map((status) => (
            <option key={status} value={status} selected={query.statuses.includes(status)}>
              {statusLabel(status)}
            </option>
          ))}
        </select>
        <span id="filter-status-hint" class="field-hint">
          Ctrl or ⌘ to pick several; none: all
        </span>
      </div>
      <div class="field">
        <label for="filter-session">Session</label>
        <input
          id="filter-session"
          type="search"
          autocomplete="off"
          value={session.value}
          onInput={(event) => session.type(event.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="filter-from">From</label>
        <input
          id="filter-from"
          type="datetime-local"
          value={toDateTimeLocal(query.from, "minutes")}
          onChange={(event) =>
            onChange({ ...query, from: fromDateTimeLocal(event.currentTarget.value) ?? "" })
          }
        />
      </div>
      <div class="field">
        <label for="filter-to">To</label>
        <input
          id="filter-to"
          type="datetime-local"
          value={toDateTimeLocal(query.to, "minutes")}
          onChange={(event) => onChange({ ...query, to: fromDateTimeLocal(event.currentTarget.value) ?? "" })}
        />
      </div>
      {hasExecutionFilters(query) ? (
        <div class="field">
          <button
            type="button"
            class="secondary"
            onClick={() => onChange({ skill: "", statuses: [], session: "", from: "", to: "" })}
          >
            Clear filters
          </button>
        </div>
      ) : null}
    </form>
  );
}

/**
 * A text field whose value reaches `commit` after a pause in typing (or at once on `flush`).
 * The route's value replaces the typed one only when it changed from elsewhere (back button,
 * "Clear filters"): a route catching up with an older keystroke must not undo newer ones.
 */
function useTypedText(routeValue: string, commit: (value: string) => void) {
  const [value, setValue] = useState(routeValue);
  const committed = useRef(routeValue);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const commitRef = useRef(commit);
  commitRef.current = commit;
  const latest = useRef(value);
  latest.current = value;

  useEffect(() => {
    if (routeValue !== committed.current) {
      committed.current = routeValue;
      clearTimeout(timer.current);
      timer.current = undefined;
      setValue(routeValue);
    }
  }, [routeValue]);
  useEffect(() => () => clearTimeout(timer.current), []);

  const flush = () => {
    clearTimeout(timer.current);
    timer.current = undefined;
    const text = latest.current.trim();
    if (text === committed.current) return;
    committed.current = text;
    commitRef.current(text);
  };
  return {
    value,
    type(text: string) {
      setValue(text);
      latest.current = text;
      clearTimeout(timer.current);
      timer.current = setTimeout(flush, TYPING_PAUSE_MS);
    },
    flush,
  };
}

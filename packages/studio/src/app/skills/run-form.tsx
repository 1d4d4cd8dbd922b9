import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { isApiError } from "../api/api-error.js";
import { type ExecutionRecord, isFinalStatus, type SkillView } from "../api/api-types.js";
import { latestRecord } from "../api/latest-record.js";
import { statusLabel } from "../components/status-badge.js";
import { parseJsonText, violationIssues } from "../form/field-text.js";
import { finalValue, initialValue, validateValue } from "../form/field-values.js";
import { buildFieldModel, type FieldIssue } from "../form/schema-fields.js";
import { SchemaFields } from "../form/schema-form.js";
import { useLiveEvent } from "../hooks/use-live-event.js";
import { useStudio } from "../studio-context.js";
import { type RunOutcome, RunResult } from "./run-result.js";

/** An input to put in the form (an example); `serial` tells one fill from the next. */
export interface FormFill {
  input: unknown;
  serial: number;
}

/** Props of {@link RunForm}. */
export interface RunFormProps {
  skill: SkillView;
  /** The version to run; undefined runs what the bare name runs. */
  version: string | undefined;
  fill: FormFill | undefined;
}

/**
 * The run form of a skill: fields generated from its input schema (or raw JSON), checked before
 * anything is sent, then `POST /api/skills/:name/execute` and its "Result".
 */
export function RunForm({ skill, version, fill }: RunFormProps) {
  const { api, announce } = useStudio();
  const schemaKey = JSON.stringify(skill.inputSchema);
  const model = useMemo(() => buildFieldModel(skill.inputSchema), [schemaKey]);
  const formOnlyJson = model.kind === "json";
  const [value, setValue] = useState<unknown>(() => initialValue(model));
  const [raw, setRaw] = useState(formOnlyJson);
  const [rawText, setRawText] = useState(() => JSON.stringify(initialValue(model) ?? {}, null, 2));
  const [rawIssue, setRawIssue] = useState<string | undefined>(undefined);
  const [textIssues, setTextIssues] = useState<ReadonlyMap<string, string>>(new Map());
  const [checked, setChecked] = useState(false);
  const [serverIssues, setServerIssues] = useState<FieldIssue[]>([]);
  const [outcome, setOutcome] = useState<RunOutcome | undefined>(undefined);
  const [focusInvalid, setFocusInvalid] = useState(0);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (formOnlyJson) setRaw(true);
  }, [formOnlyJson]);

  // A fill made before this form existed (another version's) is not this form's to apply.
  const mountedFill = useRef(fill?.serial);
  useEffect(() => {
    if (fill === undefined || fill.serial === mountedFill.current) return;
    setValue(fill.input);
    setRawText(JSON.stringify(fill.input ?? {}, null, 2));
    setRawIssue(undefined);
    setServerIssues([]);
    setChecked(false);
  }, [fill?.serial]);

  useEffect(() => {
    if (focusInvalid === 0) return;
    form.current?.querySelector<HTMLElement>("[aria-invalid=true]")?.focus();
  }, [focusInvalid]);

  // A run that waits (approval, queue) is followed until it ends; after a gap in the stream
  // (a reconnect, dropped events) it is read again, as events of the gap are not replayed.
  const follow = useCallback((record: ExecutionRecord) => {
    setOutcome((current) =>
      current?.kind === "execution" && current.execution.id === record.id
        ? { kind: "execution", execution: latestRecord(current.execution, record) }
        : current,
    );
  }, []);
  useLiveEvent((event) => {
    if (outcome?.kind !== "execution") return;
    const { id } = outcome.execution;
    if ((event.type === "status" || event.type === "finished") && event.executionId === id) {
      follow(event.execution);
    } else if (
      (event.type === "resync" || event.type === "lagged") &&
      !isFinalStatus(outcome.execution.status)
    ) {
      api.getExecution(id).then(follow, (error: unknown) => {
        if (!isApiError(error)) throw error;
      });
    }
  });

  const onChange = useCallback((update: (current: unknown) => unknown) => {
    setValue(update);
    setServerIssues([]);
  }, []);
  const onTextIssue = useCallback((label: string, message: string | undefined) => {
    setTextIssues((current) => {
      if (current.get(label) === message) return current;
      const next = new Map(current);
      if (message === undefined) next.delete(label);
      else next.set(label, message);
      return next;
    });
  }, []);

  const localIssues = checked ? validateValue(model, finalValue(model, value)) : [];
  const issues = new Map<string, string[]>();
  const shownIssues = [
    ...localIssues,
    ...[...textIssues].map(([label, message]) => ({ label, message })),
    ...serverIssues,
  ];
  for (const issue of shownIssues)
    issues.set(issue.label, [...(issues.get(issue.label) ?? []), issue.message]);

  const switchMode = (toRaw: boolean) => {
    if (toRaw) {
      setRawText(JSON.stringify(finalValue(model, value) ?? {}, null, 2));
      setRawIssue(undefined);
      setRaw(true);
      return;
    }
    const parsed = parseJsonText(rawText);
    if (!parsed.ok) {
      setRawIssue(`Input (JSON) is not valid JSON, so the form cannot show it: ${parsed.message}`);
      return;
    }
    setValue(parsed.value ?? initialValue(model));
    setRawIssue(undefined);
    setRaw(false);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (outcome?.kind === "running") return;
    let input: unknown;
    if (raw) {
      const parsed = parseJsonText(rawText);
      if (!parsed.ok) {
        setRawIssue(`Input (JSON) is not valid JSON: ${parsed.message}`);
        setFocusInvalid((count) => count + 1);
        return;
      }
      input = parsed.value ?? {};
    } else {
      const final = finalValue(model, value);
      const problems = [...validateValue(model, final), ...textIssues.values()];
      if (problems.length > 0) {
        setChecked(true);
        setFocusInvalid((count) => count + 1);
        announce(`${problems.length} field${problems.length === 1 ? " needs" : "s need"} attention`);
        return;
      }
      // An empty root object (or JSON box) is sent as `{}`, as the API reads a missing input.
      input = final ?? {};
    }
    setChecked(false);
    setServerIssues([]);
    setOutcome({ kind: "running" });
    try {
      const { execution } = await api.executeSkill(skill.name, { input, version });
      setOutcome({ kind: "execution", execution });
      announce(`Execution ${statusLabel(execution.status)}`);
    } catch (error) {
      if (!isApiError(error)) throw error;
      if (error.code === "INPUT_INVALID" && error.status === 422) {
        const data = (error.data ?? {}) as { violations?: unknown; executionId?: unknown };
        const violations = violationIssues(data.violations);
        setServerIssues(violations);
        setOutcome({
          kind: "refused",
          error,
          violations,
          executionId: typeof data.executionId === "string" ? data.executionId : undefined,
        });
      } else {
        setOutcome({ kind: "failed", error });
      }
      announce(`The run was refused: ${error.message}`);
    }
  };

  // Half-typed numbers and JSON are marked at their fields as they are typed; the summary (an
  // alert) speaks only after a run was refused for them.
  const summary =
    raw || !checked
      ? []
      : [...localIssues, ...[...textIssues].map(([label, message]) => ({ label, message }))];
  return (
    <>
      <form
        ref={form}
        class="card run-form"
        aria-label={`Run ${skill.name}`}
        noValidate
        onSubmit={(event) => void submit(event)}
      >
        <h2>Run</h2>
        {formOnlyJson ? (
          <p class="field-hint">
            This skill's input schema has no form ({model.kind === "json" ? model.reason : ""}): write the
            input as JSON.
          </p>
        ) : (
          <p class="form-mode">
            <input
              type="checkbox"
              role="switch"
              aria-checked={raw}
              id="run-form-raw"
              checked={raw}
              onChange={(event) => switchMode(event.currentTarget.checked)}
            />
            <label for="run-form-raw">Edit as JSON</label>
          </p>
        )}
        {summary.length > 0 ? (
          <div class="notice notice-error" role="alert">
            <strong>
              {summary.length} field{summary.length === 1 ? " needs" : "s need"} attention before running:
            </strong>
            <ul>
              {summary.map((issue) => (
                <li key={`${issue.label}:${issue.message}`}>{issue.message}</li>
              ))}
            </ul>
          </div>
        ) : null}
        {raw ? (
          <div class="field">
            <label for="run-form-json">Input (JSON)</label>
            <textarea
              id="run-form-json"
              class="form-json"
              rows={Math.min(Math.max(rawText.split("\n").length, 6), 24)}
              spellcheck={false}
              value={rawText}
              aria-invalid={rawIssue === undefined ? undefined : true}
              aria-describedby={rawIssue === undefined ? undefined : "run-form-json-error"}
              onInput={(event) => {
                const text = event.currentTarget.value;
                setRawText(text);
                // Once a problem is shown it follows the typing, so it goes when the text is fixed.
                if (rawIssue !== undefined) {
                  const parsed = parseJsonText(text);
                  setRawIssue(parsed.ok ? undefined : `Input (JSON) is not valid JSON: ${parsed.message}`);
                }
              }}
            />
            {rawIssue === undefined ? null : (
              <p class="form-issue" id="run-form-json-error" role="alert">
                {rawIssue}
              </p>
            )}
          </div>
        ) : (
          <SchemaFields
            model={model}
            value={value}
            onChange={onChange}
            issues={issues}
            onTextIssue={onTextIssue}
            idPrefix="run-input-"
          />
        )}
        <div class="toolbar run-actions">
          <button type="submit" disabled={outcome?.kind === "running"}>
            Run
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              const initial = initialValue(model);
              setValue(initial);
              setRawText(JSON.stringify(initial ?? {}, null, 2));
              setRawIssue(undefined);
              setChecked(false);
              setServerIssues([]);
            }}
          >
            Reset
          </button>
          {version === undefined ? null : <span class="field-hint">Runs version {version}</span>}
        </div>
      </form>
      {outcome === undefined ? null : <RunResult outcome={outcome} />}
    </>
  );
}

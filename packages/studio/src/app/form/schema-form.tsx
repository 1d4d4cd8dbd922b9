import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { fromDateTimeLocal, toDateTimeLocal } from "../format.js";
import { constraintText, parseJsonText } from "./field-text.js";
import { initialValue, pathLabel, valueAt, withValueAt } from "./field-values.js";
import type {
  ArrayField,
  FieldModel,
  FieldPath,
  JsonField,
  NumberField,
  ObjectField,
  StringField,
} from "./schema-fields.js";
import "./schema-form.css";

/** Props of {@link SchemaFields}. */
export interface SchemaFieldsProps {
  model: FieldModel;
  value: unknown;
  /** Applies a change to the form's value (an updater: several fields may change before a render). */
  onChange: (update: (value: unknown) => unknown) => void;
  /** Problems to show next to fields, by label. */
  issues: ReadonlyMap<string, string[]>;
  /** A text box whose text is not a value yet (bad JSON, half a number) says so; undefined clears it. */
  onTextIssue: (label: string, message: string | undefined) => void;
  /** Makes the ids of this form's inputs unique on the page. */
  idPrefix: string;
}

interface FieldProps extends Omit<SchemaFieldsProps, "model"> {
  field: FieldModel;
  path: FieldPath;
}

/**
 * The inputs of a generated run form. The root object's properties are laid out directly; nested
 * objects and arrays get fieldsets whose legends are their paths. Every input is labelled by its
 * path (`address.city`, `tags[0]`).
 */
export function SchemaFields(props: SchemaFieldsProps) {
  const { model, ...rest } = props;
  if (model.kind === "object") {
    return (
      <>
        {model.properties.map(({ name, field }) => (
          <Field key={name} {...rest} field={field} path={[name]} />
        ))}
      </>
    );
  }
  return <Field {...rest} field={model} path={[]} />;
}

function Field(props: FieldProps) {
  switch (props.field.kind) {
    case "object":
      return <ObjectFieldset {...props} field={props.field} />;
    case "array":
      return <ArrayFieldset {...props} field={props.field} />;
    case "json":
      return <JsonInput {...props} field={props.field} />;
    case "number":
      return <NumberInput {...props} field={props.field} />;
    case "string":
      return <StringInput {...props} field={props.field} />;
    default:
      return <SimpleInput {...props} />;
  }
}

/** The ids of a field's input and of what describes it. */
function idsOf(props: FieldProps) {
  const label = pathLabel(props.path);
  const id = `${props.idPrefix}${encodeURIComponent(label)}`;
  const issues = props.issues.get(label) ?? [];
  const hint = hintOf(props.field);
  const describedBy = [
    props.field.required ? `${id}-required` : undefined,
    hint === undefined ? undefined : `${id}-hint`,
    issues.length === 0 ? undefined : `${id}-error`,
  ].filter((entry) => entry !== undefined);
  return {
    label,
    id,
    issues,
    hint,
    inputAttributes: {
      id,
      "aria-describedby": describedBy.length === 0 ? undefined : describedBy.join(" "),
      "aria-invalid": issues.length > 0 ? true : undefined,
      "aria-required": props.field.required ? true : undefined,
    },
  };
}

function hintOf(field: FieldModel): string | undefined {
  const limits = constraintText(field);
  if (field.description === undefined) return limits;
  if (limits === undefined) return field.description;
  return `${field.description}${/[.!?]$/.test(field.description) ? "" : "."} ${limits}`;
}

/** Label, "required", the input, its hint and its problems. */
function FieldFrame(props: FieldProps & { children: ComponentChildren; labelSuffix?: string }) {
  const { label, id, issues, hint } = idsOf(props);
  const value = valueAt(props.value, props.path);
  return (
    <div class="field form-field" data-field={label}>
      <div class="form-label-row">
        <label for={id}>
          {label}
          {props.labelSuffix}
        </label>
        {props.field.required ? (
          <span class="form-required" id={`${id}-required`}>
            required
          </span>
        ) : null}
      </div>
      {props.children}
      {props.field.nullable && props.field.kind !== "json" ? (
        <NullToggle {...props} value={value} id={id} label={label} />
      ) : null}
      {hint === undefined ? null : (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <FieldIssues id={id} issues={issues} />
    </div>
  );
}

function FieldIssues({ id, issues }: { id: string; issues: string[] }) {
  if (issues.length === 0) return null;
  return (
    <p class="form-issue" id={`${id}-error`}>
      {issues.join("; ")}
    </p>
  );
}

function NullToggle(props: FieldProps & { id: string; label: string }) {
  const { field, path, onChange, id, label, value } = props;
  return (
    <span class="form-null">
      <input
        type="checkbox"
        id={`${id}-null`}
        checked={value === null}
        onChange={(event) => {
          const checked = event.currentTarget.checked;
          onChange((current) => withValueAt(current, path, checked ? null : initialValue(field)));
        }}
      />
      <label for={`${id}-null`}>{label} is null</label>
    </span>
  );
}

function ObjectFieldset(props: FieldProps & { field: ObjectField }) {
  const { field, path } = props;
  const { label, id, issues, hint } = idsOf(props);
  const value = valueAt(props.value, path);
  return (
    <fieldset
      class="form-group"
      data-field={label}
      aria-describedby={hint === undefined ? undefined : `${id}-hint`}
    >
      <legend>
        {label}
        {field.required ? <span class="form-required"> required</span> : null}
      </legend>
      {hint === undefined ? null : (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {field.nullable ? <NullToggle {...props} value={value} id={id} label={label} /> : null}
      {value === null
        ? null
        : field.properties.map(({ name, field: child }) => (
            <Field key={name} {...props} field={child} path={[...path, name]} />
          ))}
      <FieldIssues id={id} issues={issues} />
    </fieldset>
  );
}

function ArrayFieldset(props: FieldProps & { field: ArrayField }) {
  const { field, path, onChange } = props;
  const { label, id, issues, hint } = idsOf(props);
  const value = valueAt(props.value, path);
  const items = Array.isArray(value) ? value : [];
  const full = field.maxItems !== undefined && items.length >= field.maxItems;
  return (
    <fieldset
      class="form-group"
      data-field={label}
      aria-describedby={hint === undefined ? undefined : `${id}-hint`}
    >
      <legend>
        {label}
        {field.required ? <span class="form-required"> required</span> : null}
      </legend>
      {hint === undefined ? null : (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {field.nullable ? <NullToggle {...props} value={value} id={id} label={label} /> : null}
      {items.length === 0 && value !== null ? <p class="empty">No items.</p> : null}
      {/* Items are positions in a list, so their index is their identity. */}
      {items.map((_item, index) => (
        <div class="form-array-item" key={index}>
          <Field {...props} field={field.item} path={[...path, index]} />
          <button
            type="button"
            class="secondary"
            onClick={() =>
              onChange((current) => {
                const list = valueAt(current, path);
                return withValueAt(
                  current,
                  path,
                  Array.isArray(list) ? list.filter((_entry, position) => position !== index) : [],
                );
              })
            }
          >
            Remove {pathLabel([...path, index])}
          </button>
        </div>
      ))}
      {value === null ? null : (
        <button
          type="button"
          class="secondary"
          disabled={full}
          onClick={() =>
            onChange((current) => {
              const list = valueAt(current, path);
              return withValueAt(current, path, [
                ...(Array.isArray(list) ? list : []),
                initialValue(field.item),
              ]);
            })
          }
        >
          Add to {label}
        </button>
      )}
      <FieldIssues id={id} issues={issues} />
    </fieldset>
  );
}

/** Enums (a select), constants (read-only) and booleans (a checkbox). */
function SimpleInput(props: FieldProps) {
  const { field, path, onChange } = props;
  const { inputAttributes } = idsOf(props);
  const value = valueAt(props.value, path);
  const set = (next: unknown) => onChange((current) => withValueAt(current, path, next));
  if (field.kind === "boolean") {
    return (
      <FieldFrame {...props}>
        <input
          type="checkbox"
          {...inputAttributes}
          checked={value === true}
          disabled={value === null}
          onChange={(event) => set(event.currentTarget.checked)}
        />
      </FieldFrame>
    );
  }
  if (field.kind === "const") {
    return (
      <FieldFrame {...props}>
        <input type="text" {...inputAttributes} readOnly value={JSON.stringify(field.value)} />
      </FieldFrame>
    );
  }
  if (field.kind !== "enum") return null;
  const selected = field.options.findIndex((option) => JSON.stringify(option) === JSON.stringify(value));
  return (
    <FieldFrame {...props}>
      <select
        {...inputAttributes}
        value={selected === -1 ? "" : String(selected)}
        onChange={(event) => {
          const index = event.currentTarget.value;
          set(index === "" ? undefined : field.options[Number(index)]);
        }}
      >
        {selected === -1 || !field.required ? <option value="">(not set)</option> : null}
        {field.options.map((option, index) => (
          <option key={JSON.stringify(option)} value={String(index)}>
            {typeof option === "string" ? option : JSON.stringify(option)}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

function StringInput(props: FieldProps & { field: StringField }) {
  const { field, path, onChange } = props;
  const { inputAttributes } = idsOf(props);
  const value = valueAt(props.value, path);
  const dateTime = field.inputType === "datetime-local";
  const shown = dateTime ? toDateTimeLocal(value) : typeof value === "string" ? value : "";
  return (
    <FieldFrame {...props}>
      <input
        // Preact types each input type's attributes apart; the union of them is what this box is.
        type={field.inputType as "text"}
        {...inputAttributes}
        value={shown}
        step={dateTime ? 1 : undefined}
        disabled={value === null}
        minLength={field.minLength}
        maxLength={field.maxLength}
        onInput={(event) => {
          const text = event.currentTarget.value;
          const next = dateTime ? fromDateTimeLocal(text) : text === "" && !field.inArray ? undefined : text;
          onChange((current) => withValueAt(current, path, next));
        }}
      />
    </FieldFrame>
  );
}

/**
 * A number box keeps its own text: "1." or "-" are on their way to a number, and rewriting the
 * box from the value would fight the typing.
 */
function NumberInput(props: FieldProps & { field: NumberField }) {
  const { field, path, onChange, onTextIssue } = props;
  const { label, inputAttributes } = idsOf(props);
  const value = valueAt(props.value, path);
  const [text, setText] = useState(typeof value === "number" ? String(value) : "");
  useEffect(() => {
    const typed = text.trim() === "" ? undefined : Number(text);
    if (typed !== value) {
      setText(typeof value === "number" ? String(value) : "");
      onTextIssue(label, undefined);
    }
  }, [value]);
  useEffect(() => () => onTextIssue(label, undefined), [label]);
  return (
    <FieldFrame {...props}>
      <input
        type="number"
        {...inputAttributes}
        inputMode={field.integer ? "numeric" : "decimal"}
        value={text}
        disabled={value === null}
        min={field.minimum}
        max={field.maximum}
        step={field.step}
        onInput={(event) => {
          const input = event.currentTarget;
          setText(input.value);
          if (input.validity.badInput) {
            onTextIssue(label, `${label} must be a number`);
            return;
          }
          onTextIssue(label, undefined);
          const next = input.value.trim() === "" ? undefined : Number(input.value);
          onChange((current) => withValueAt(current, path, next));
        }}
      />
    </FieldFrame>
  );
}

/** The raw-JSON fallback for a part of the input the form cannot express. */
function JsonInput(props: FieldProps & { field: JsonField }) {
  const { path, onChange, onTextIssue } = props;
  const { label, inputAttributes } = idsOf(props);
  const value = valueAt(props.value, path);
  const [text, setText] = useState(() => jsonText(value));
  useEffect(() => {
    const parsed = parseJsonText(text);
    if (!parsed.ok || JSON.stringify(parsed.value) !== JSON.stringify(value)) {
      setText(jsonText(value));
      onTextIssue(label, undefined);
    }
  }, [JSON.stringify(value)]);
  useEffect(() => () => onTextIssue(label, undefined), [label]);
  return (
    <FieldFrame {...props} labelSuffix=" (JSON)">
      <textarea
        {...inputAttributes}
        class="form-json"
        rows={Math.min(Math.max(text.split("\n").length, 3), 14)}
        spellcheck={false}
        value={text}
        onInput={(event) => {
          const next = event.currentTarget.value;
          setText(next);
          const parsed = parseJsonText(next);
          if (!parsed.ok) {
            onTextIssue(label, `${label} is not valid JSON: ${parsed.message}`);
            return;
          }
          onTextIssue(label, undefined);
          onChange((current) => withValueAt(current, path, parsed.value));
        }}
      />
    </FieldFrame>
  );
}

function jsonText(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

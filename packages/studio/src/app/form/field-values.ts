import { isJsonObject } from "./is-json-object.js";
import type { FieldIssue, FieldModel, FieldPath, NumberField, StringField } from "./schema-fields.js";

// The values of a generated form: reading and writing them by path, what a new form starts with,
// what is sent, and what is wrong with them. Pure, as the field model is.

/** How a path reads as a label: `["address", "city"]` → `address.city`, `["tags", 0]` → `tags[0]`. */
export function pathLabel(path: FieldPath): string {
  if (path.length === 0) return "input";
  let label = "";
  for (const segment of path) {
    if (typeof segment === "number") label += `[${segment}]`;
    else label += label === "" ? segment : `.${segment}`;
  }
  return label;
}

/**
 * The value at `path`, or undefined. Only a value's own entries count: a property named
 * `constructor` or `toString` of an empty object has no value, whatever `Object.prototype` holds.
 */
export function valueAt(value: unknown, path: FieldPath): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof segment === "number") current = Array.isArray(current) ? current[segment] : undefined;
    else current = isJsonObject(current) ? ownValue(current, segment) : undefined;
  }
  return current;
}

/**
 * `value` with `next` at `path` (a copy: the form's state is never mutated), creating the
 * objects and arrays on the way. `undefined` removes a property.
 */
export function withValueAt(value: unknown, path: FieldPath, next: unknown): unknown {
  if (path.length === 0) return next;
  const [segment, ...rest] = path as [string | number, ...Array<string | number>];
  if (typeof segment === "number") {
    const array = Array.isArray(value) ? [...value] : [];
    array[segment] = withValueAt(array[segment], rest, next);
    return array;
  }
  const object: Record<string, unknown> = isJsonObject(value) ? { ...value } : {};
  const child = withValueAt(ownValue(object, segment), rest, next);
  if (child === undefined) delete object[segment];
  else setOwn(object, segment, child);
  return object;
}

/** An object's own property (a schema may name one `constructor`), or undefined. */
function ownValue(object: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}

/** Sets an own property, `__proto__` too (an assignment would set the object's prototype instead). */
function setOwn(object: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy of a JSON value (defaults and examples are shared by every form made from them). */
function copy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * The value a new form starts with: defaults, constants, `false` for required booleans, and
 * objects for the required ones. An optional object exists only when one of its fields has a
 * default (else sending `{}` would trip its own required fields).
 */
export function initialValue(field: FieldModel): unknown {
  if (field.hasDefault) return copy(field.default);
  switch (field.kind) {
    case "const":
      return copy(field.value);
    case "boolean":
      return field.required ? false : undefined;
    case "string":
      return field.inArray ? "" : undefined;
    case "enum":
      return field.required && field.options.length > 0 ? copy(field.options[0]) : undefined;
    case "array": {
      if (!field.required) return undefined;
      return Array.from({ length: field.minItems ?? 0 }, () => initialValue(field.item));
    }
    case "object": {
      const object: Record<string, unknown> = {};
      let defaulted = false;
      for (const { name, field: child } of field.properties) {
        const value = initialValue(child);
        if (value === undefined) continue;
        setOwn(object, name, value);
        if (child.hasDefault) defaulted = true;
      }
      return field.required || defaulted ? object : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The value to send: optional objects left empty are dropped (and present ones get their
 * constants). Properties the form does not show — from an example, say — are kept.
 */
export function finalValue(field: FieldModel, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (field.kind === "object" && isJsonObject(value)) {
    // The schema's order first (the output and the raw JSON read like the form), then the rest.
    const object: Record<string, unknown> = {};
    for (const { name, field: child } of field.properties) {
      const next = finalValue(child, ownValue(value, name));
      if (next !== undefined) setOwn(object, name, next);
    }
    for (const [name, entry] of Object.entries(value)) {
      if (!field.properties.some((property) => property.name === name)) setOwn(object, name, entry);
    }
    if (!field.required && Object.keys(object).length === 0) return undefined;
    for (const { name, field: child } of field.properties) {
      if (child.kind === "const" && ownValue(object, name) === undefined)
        setOwn(object, name, copy(child.value));
    }
    return object;
  }
  if (field.kind === "array" && Array.isArray(value))
    return value.map((item) => finalValue(field.item, item));
  return value;
}

/** What is wrong with `value` for `field` (checked before anything is sent). */
export function validateValue(field: FieldModel, value: unknown, path: FieldPath = []): FieldIssue[] {
  const label = pathLabel(path);
  const issue = (message: string): FieldIssue[] => [{ label, message: `${label} ${message}` }];
  if (value === undefined) {
    // An empty root object or JSON box is sent as `{}`; any other root needs a value.
    const sentAsEmpty = path.length === 0 && (field.kind === "object" || field.kind === "json");
    return field.required && !sentAsEmpty ? issue("is required") : [];
  }
  if (value === null) {
    if (field.nullable || field.kind === "json") return [];
    if (field.kind === "enum" && field.options.includes(null)) return [];
    return issue("must not be null");
  }
  switch (field.kind) {
    case "json":
      return [];
    case "const":
      return sameJson(value, field.value) ? [] : issue(`must be ${JSON.stringify(field.value)}`);
    case "enum":
      return field.options.some((option) => sameJson(option, value))
        ? []
        : issue(`must be one of ${field.options.map((option) => JSON.stringify(option)).join(", ")}`);
    case "boolean":
      return typeof value === "boolean" ? [] : issue("must be true or false");
    case "string":
      return stringIssues(field, value).flatMap(issue);
    case "number":
      return numberIssues(field, value).flatMap(issue);
    case "array": {
      if (!Array.isArray(value)) return issue("must be a list");
      const issues: FieldIssue[] = [];
      if (field.minItems !== undefined && value.length < field.minItems) {
        issues.push(...issue(`needs at least ${field.minItems} item${field.minItems === 1 ? "" : "s"}`));
      }
      if (field.maxItems !== undefined && value.length > field.maxItems) {
        issues.push(...issue(`takes at most ${field.maxItems} item${field.maxItems === 1 ? "" : "s"}`));
      }
      for (const [index, item] of value.entries()) {
        issues.push(...validateValue(field.item, item, [...path, index]));
      }
      return issues;
    }
    case "object": {
      if (!isJsonObject(value)) return issue("must be an object");
      return field.properties.flatMap(({ name, field: child }) =>
        validateValue(child, ownValue(value, name), [...path, name]),
      );
    }
  }
}

function stringIssues(field: StringField, value: unknown): string[] {
  if (typeof value !== "string") return ["must be text"];
  const issues: string[] = [];
  const length = [...value].length;
  if (field.minLength !== undefined && length < field.minLength) {
    issues.push(
      field.minLength === 1 && length === 0
        ? "must not be empty"
        : `must be at least ${field.minLength} characters long`,
    );
  }
  if (field.maxLength !== undefined && length > field.maxLength) {
    issues.push(`must be at most ${field.maxLength} characters long`);
  }
  if (field.pattern !== undefined) {
    const pattern = compilePattern(field.pattern);
    if (pattern !== undefined && !pattern.test(value)) issues.push(`must match the pattern ${field.pattern}`);
  }
  return issues;
}

function numberIssues(field: NumberField, value: unknown): string[] {
  if (typeof value !== "number" || !Number.isFinite(value)) return ["must be a number"];
  const issues: string[] = [];
  if (field.integer && !Number.isInteger(value)) issues.push("must be a whole number");
  if (field.minimum !== undefined && value < field.minimum) issues.push(`must be at least ${field.minimum}`);
  if (field.maximum !== undefined && value > field.maximum) issues.push(`must be at most ${field.maximum}`);
  if (field.exclusiveMinimum !== undefined && value <= field.exclusiveMinimum) {
    issues.push(`must be more than ${field.exclusiveMinimum}`);
  }
  if (field.exclusiveMaximum !== undefined && value >= field.exclusiveMaximum) {
    issues.push(`must be less than ${field.exclusiveMaximum}`);
  }
  return issues;
}

/** JSON Schema patterns are ECMAScript regular expressions, unanchored; a broken one checks nothing here (the server says). */
function compilePattern(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return undefined;
  }
}

function sameJson(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

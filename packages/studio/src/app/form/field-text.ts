import { pathLabel } from "./field-values.js";
import { isJsonObject } from "./is-json-object.js";
import type { FieldIssue, FieldModel } from "./schema-fields.js";

// How a generated form talks: the server's violations in its labels, JSON boxes, date-time
// boxes, and limits in words. Pure, as the field model is.

/** One schema violation as the server reports it (Ajv's `instancePath`, `keyword`, `message`, `params`). */
export interface SchemaViolation {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * The server's violations (`error.data.violations` of a 422 `INPUT_INVALID`) as issues named
 * by the form's labels: `/address/city` → `address.city`; a missing property names itself.
 */
export function violationIssues(violations: unknown): FieldIssue[] {
  if (!Array.isArray(violations)) return [];
  return violations.filter(isJsonObject).map((violation: SchemaViolation) => {
    const path: Array<string | number> = (violation.instancePath ?? "")
      .split("/")
      .slice(1)
      .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))
      .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
    const missing = violation.params?.missingProperty;
    if (violation.keyword === "required" && typeof missing === "string") {
      const label = pathLabel([...path, missing]);
      return { label, message: `${label} is required` };
    }
    const label = pathLabel(path);
    const extra = violation.params?.additionalProperty;
    const detail = typeof extra === "string" ? ` (${extra})` : "";
    return { label, message: `${label} ${violation.message ?? "is not valid"}${detail}` };
  });
}

/** Text from a JSON text box: its value (undefined for an empty box), or why it does not parse. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text.trim() === "") return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** The limits of a field in words, for its hint: "from 1 to 10", "at most 20 characters". */
export function constraintText(field: FieldModel): string | undefined {
  const parts: string[] = [];
  if (field.kind === "number") {
    if (field.integer) parts.push("a whole number");
    if (field.minimum !== undefined) parts.push(`at least ${field.minimum}`);
    if (field.exclusiveMinimum !== undefined) parts.push(`more than ${field.exclusiveMinimum}`);
    if (field.maximum !== undefined) parts.push(`at most ${field.maximum}`);
    if (field.exclusiveMaximum !== undefined) parts.push(`less than ${field.exclusiveMaximum}`);
  } else if (field.kind === "string") {
    if (field.format !== undefined) parts.push(`format ${field.format}`);
    if (field.minLength !== undefined) parts.push(`at least ${field.minLength} characters`);
    if (field.maxLength !== undefined) parts.push(`at most ${field.maxLength} characters`);
    if (field.pattern !== undefined) parts.push(`matching ${field.pattern}`);
  } else if (field.kind === "array") {
    if (field.minItems !== undefined) parts.push(`at least ${field.minItems} items`);
    if (field.maxItems !== undefined) parts.push(`at most ${field.maxItems} items`);
  } else if (field.kind === "json") {
    parts.push(`JSON, because ${field.reason}`);
  }
  if (field.nullable) parts.push("or null");
  return parts.length === 0
    ? undefined
    : `${parts.join(", ")}.`.replace(/^./, (first) => first.toUpperCase());
}

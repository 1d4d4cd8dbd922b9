import { type Span, SpanStatusCode } from "@opentelemetry/api";

/** The code of a SkillboxError-like value, if it has one. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Marks `span` failed with `error`: its code as `error.type`, its message as the status message. */
export function markFailed(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  const code = codeOf(error);
  span.setAttribute("error.type", code ?? (error instanceof Error ? error.name : "Error"));
  if (code !== undefined) span.setAttribute("skillbox.error.code", code);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/**
 * What the executor reports to OpenTelemetry (option `telemetry` of `createSkillHost`). Spans and
 * metrics go to whatever SDK the application (or `skillbox serve`) installed; with none installed
 * they cost next to nothing. `false` turns both off.
 */
export interface TelemetryOptions {
  /**
   * Whether the `execute_tool` span carries the input as `gen_ai.tool.call.arguments` (default
   * false). It is the input as the audit trail stores it: after the interceptors' `audit` redaction.
   */
  recordInputs?: boolean;
  /** Whether it carries the output as `gen_ai.tool.call.result` (default false), redacted the same way. */
  recordOutputs?: boolean;
}

export {
  type ExecuteToolCallsOptions,
  executeToolCalls,
  type ToolResult,
} from "./execute-tool-calls.js";
export { type ExtractToolCallsOptions, extractToolCalls } from "./extract-tool-calls.js";
export { toGeminiSchema } from "./gemini-schema.js";
export { LLM_ERROR_CODES, type LlmErrorCode } from "./llm-error-codes.js";
export { type ResolveToolApprovalsOptions, resolveToolApprovals } from "./resolve-tool-approvals.js";
export { type ResumeToolLoopOptions, resumeToolLoop } from "./resume-tool-loop.js";
export {
  type RunToolLoopOptions,
  runToolLoop,
  type ToolLoopResult,
  type ToolLoopSettings,
  type ToolLoopState,
} from "./run-tool-loop.js";
export { toToolResults } from "./to-tool-results.js";
export { type ToOptions, toTools } from "./to-tools.js";
export type { ToolApprovalDecision, ToolApprovalRequest } from "./tool-approval.js";
export type { ToolCall } from "./tool-call.js";
export { ToolCallAccumulator } from "./tool-call-accumulator.js";
export type { ToolFormat } from "./tool-format.js";
export { type NamedSkill, type ToolNameOptions, toolNameMap } from "./tool-name.js";

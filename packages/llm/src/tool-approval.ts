/**
 * A tool call whose execution waits for a person: what `executeToolCalls` returns as
 * `ToolResult.approval` instead of a result for the model, and `runToolLoop` lists in
 * `pendingApprovals` when it pauses — the counterpart of the AI SDK's `tool-approval-request`
 * part. Plain JSON: it can be stored with the loop's state and shown in any UI.
 */
export interface ToolApprovalRequest {
  /** The provider's call id (`ToolCall.id`). */
  toolCallId: string;
  /** The tool name the model called. */
  toolName: string;
  /** The execution that waits (`awaiting_approval`): `executor.approve(id)` / `reject(id)` decide it. */
  executionId: string;
  /** `name@version` of the skill that waits. */
  skill: string;
  /** Why approval is needed, as the approver should see it. */
  reason: string;
  /** The skill input the approver decides on (the tool arguments, unwrapped as the skill takes them). */
  input: unknown;
  /** When the request lapses (the execution then ends `rejected`, `APPROVAL_EXPIRED`); null for never. */
  expiresAt: string | null;
}

/**
 * A person's answer to a {@link ToolApprovalRequest}, naming it by `executionId` or `toolCallId`
 * — the counterpart of the AI SDK's `tool-approval-response` part.
 */
export interface ToolApprovalDecision {
  executionId?: string;
  toolCallId?: string;
  approved: boolean;
  /** Why it was rejected (the model reads it), or an approver's note on an approval. */
  reason?: string;
  /** An approval with an edited skill input; it is validated against the skill's schema again. */
  input?: unknown;
  /** Who decided (default: the resume's `by`, else the caller `apiKeyId`). */
  by?: string;
}

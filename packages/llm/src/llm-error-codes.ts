import { defineErrorCodes, type ErrorCodeOf } from "@skillbox/core";

/**
 * The error codes the LLM adapters raise on top of core's, each with its one line of
 * documentation. None of them ends an execution: a tool call they refuse never runs, and a
 * resume they refuse (bad decisions, a bad state) decides nothing.
 */
export const LLM_ERROR_CODES = defineErrorCodes({
  TOOL_ARGUMENTS_INVALID: {
    description:
      "A model's tool call carries arguments that are not valid JSON; the call does not run, and the model sees why.",
  },
  TOOL_APPROVAL_NOT_FOUND: {
    description:
      "A decision given to resolveToolApprovals or resumeToolLoop names an execution or tool call that is not in the paused turn.",
  },
  TOOL_APPROVAL_NOT_PENDING: {
    description:
      "A decision names a tool call that does not await approval (it already has a result), or a second decision names the same call.",
  },
  TOOL_APPROVAL_MISSING: {
    description:
      "A resume gives no decision for a tool call that awaits approval; every pending call needs one.",
  },
  TOOL_LOOP_STATE_INVALID: {
    description:
      "resumeToolLoop got a state that is not one runToolLoop returned (malformed, of another format, or with nothing pending).",
  },
  TOOL_FORMAT_INVALID: {
    description:
      'A tool format is not one the adapters know ("openai-chat", "openai-responses", "anthropic", "gemini").',
  },
});

/** The error codes of `@skillbox/llm` (see {@link LLM_ERROR_CODES}). */
export type LlmErrorCode = ErrorCodeOf<typeof LLM_ERROR_CODES>;

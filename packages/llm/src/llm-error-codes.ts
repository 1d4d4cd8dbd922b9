import { defineErrorCodes, type ErrorCodeOf } from "@skillbox/core";

/**
 * The error codes the LLM adapters raise on top of core's, each with its one line of
 * documentation. None of them ends an execution: a tool call they refuse never runs.
 */
export const LLM_ERROR_CODES = defineErrorCodes({
  TOOL_ARGUMENTS_INVALID: {
    description:
      "A model's tool call carries arguments that are not valid JSON; the call does not run, and the model sees why.",
  },
  TOOL_FORMAT_INVALID: {
    description:
      'A tool format is not one the adapters know ("openai-chat", "openai-responses", "anthropic", "gemini").',
  },
});

/** The error codes of `@skillbox/llm` (see {@link LLM_ERROR_CODES}). */
export type LlmErrorCode = ErrorCodeOf<typeof LLM_ERROR_CODES>;

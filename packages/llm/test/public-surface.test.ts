import { fileURLToPath } from "node:url";
import { describePublicSurface } from "@skillbox/test-helpers/public-surface";

/**
 * Every runtime export of `@skillbox/llm`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only this package's own modules need stays unexported.
 */
const PUBLIC_EXPORTS = [
  "LLM_ERROR_CODES",
  "ToolCallAccumulator",
  "executeToolCalls",
  "extractToolCalls",
  "resolveToolApprovals",
  "resumeToolLoop",
  "runToolLoop",
  "toGeminiSchema",
  "toToolResults",
  "toTools",
  "toolNameMap",
];

describePublicSurface({
  packageName: "@skillbox/llm",
  packageRoot: fileURLToPath(new URL("..", import.meta.url)),
  exports: PUBLIC_EXPORTS,
  importSource: () => import("@skillbox/llm"),
});

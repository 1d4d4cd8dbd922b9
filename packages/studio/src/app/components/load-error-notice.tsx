import type { SkillLoadError } from "../api/api-types.js";
import { formatTime } from "../format.js";

/**
 * The last load error of a package (`[data-load-error]`): the file, the loader's message and
 * code, when, and that the last good version keeps serving.
 */
export function LoadErrorNotice({
  error,
  servingVersion,
  class: className,
}: {
  error: SkillLoadError;
  /** The version still registered while the edit is broken. */
  servingVersion: string;
  /** Classes besides `notice notice-error`. */
  class?: string;
}) {
  return (
    <div class={`notice notice-error${className === undefined ? "" : ` ${className}`}`} data-load-error>
      <strong>Load error</strong> in <code>{error.file}</code>: {error.message}{" "}
      <code class="error-code">{error.code}</code>{" "}
      <span class="field-hint">
        ({formatTime(error.at)}; version {servingVersion} keeps serving)
      </span>
    </div>
  );
}

import type { ApiError } from "../api/api-error.js";

/** An API error as the user sees it: the server's message, with its code (announced at once). */
export function ErrorNotice({
  error,
  title,
}: {
  error: ApiError | { code: string; message: string };
  title?: string;
}) {
  return (
    <div class="notice notice-error" role="alert">
      {title === undefined ? null : <strong>{title}: </strong>}
      <span>{error.message}</span> <code class="error-code">{error.code}</code>
    </div>
  );
}

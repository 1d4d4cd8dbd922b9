import type { ComponentChildren } from "preact";
import type { ApiState } from "../hooks/use-api.js";
import { ErrorNotice } from "./error-notice.js";

/**
 * What one API read shows: its error (the server's message under `failure`), "Loading…" until
 * the first answer, then `children` of the answer.
 */
export function ApiContent<T>({
  state,
  failure,
  children,
}: {
  state: ApiState<T>;
  /** The error's title: "The interceptors cannot be read". */
  failure: string;
  children: (data: T) => ComponentChildren;
}) {
  if (state.error !== undefined) return <ErrorNotice error={state.error} title={failure} />;
  if (state.data === undefined) return <p class="loading">Loading…</p>;
  return <>{children(state.data)}</>;
}

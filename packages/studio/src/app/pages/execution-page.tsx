import type { Route } from "../router/hash-route.js";

/** Execution (being written: issue 18). */
export function ExecutionPage(_props: { route: Route; id: string }) {
  return <h1>Execution</h1>;
}

import type { Route } from "../router/hash-route.js";

/** Executions (being written: issue 18). */
export function ExecutionsPage(_props: { route: Route }) {
  return <h1>Executions</h1>;
}

import type { Route } from "../router/hash-route.js";

/** Interceptors & sandboxes (being written: issue 18). */
export function SystemPage(_props: { route: Route }) {
  return <h1>Interceptors & sandboxes</h1>;
}

import type { Route } from "../router/hash-route.js";

/** Activity (being written: issue 18). */
export function ActivityPage(_props: { route: Route }) {
  return <h1>Activity</h1>;
}

import type { Route } from "../router/hash-route.js";

/** Approvals (being written: issue 18). */
export function ApprovalsPage(_props: { route: Route }) {
  return <h1>Approvals</h1>;
}

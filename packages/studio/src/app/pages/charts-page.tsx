import type { Route } from "../router/hash-route.js";

/** Charts (being written: issue 18). */
export function ChartsPage(_props: { route: Route }) {
  return <h1>Charts</h1>;
}

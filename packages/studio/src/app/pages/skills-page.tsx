import type { Route } from "../router/hash-route.js";

/** Skills (being written: issue 18). */
export function SkillsPage(_props: { route: Route }) {
  return <h1>Skills</h1>;
}

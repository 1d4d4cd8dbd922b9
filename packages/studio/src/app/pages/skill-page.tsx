import type { Route } from "../router/hash-route.js";

/** Skill (being written: issue 18). */
export function SkillPage(_props: { route: Route; name: string }) {
  return <h1>Skill</h1>;
}

import type { Skill } from "@skillbox/core";
import { displayPath } from "@skillbox/loader/internal";

/** Where a skill came from, for display: its folder (relative when inside the working directory), or `api`. */
export function sourceLabel(skill: Skill): string {
  return skill.source.startsWith("/") ? displayPath(skill.source) : skill.source;
}

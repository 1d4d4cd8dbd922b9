import { createToolNameMap, type ToolNameMap } from "@skillbox/core";

/** How skills become tool names: shared by `toTools`, `extractToolCalls` and `executeToolCalls`. */
export interface ToolNameOptions {
  /** One tool per version, named `name_v1_2_0` (default false: one tool per name, run at its highest version at call time). */
  pinVersions?: boolean;
}

/** What naming needs of a skill. */
export type NamedSkill = { readonly name: string; readonly version: string };

/**
 * The tool names of `skills` offered together — core's `createToolNameMap`, the scheme MCP uses
 * too, so `github.issues` is the tool `github_issues` everywhere; a suffix (`_2`) only when two
 * offered skills would share a name. Without `pinVersions` the versions of a skill share one
 * tool; with it, each `name@version` is a tool of its own (`echo@1.0.0` → `echo_v1_0_0`).
 *
 * Decode a call with the map of the same skills and options its tools were made from:
 * `toolNameMap(skills).reference("github_issues")` → `{ name: "github.issues" }`, and
 * `undefined` for the client's own tools.
 */
export function toolNameMap(skills: ReadonlyArray<NamedSkill>, options: ToolNameOptions = {}): ToolNameMap {
  return createToolNameMap(
    skills.map((skill) =>
      options.pinVersions === true ? { name: skill.name, version: skill.version } : { name: skill.name },
    ),
  );
}

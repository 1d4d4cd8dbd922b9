/**
 * Fixtures of a skill package that relies on the host for `@skillbox/core`, as published skill
 * packages do: the same package is run in-process, in worker threads and in container sandboxes,
 * so each runtime is held to one contract.
 */

/** A package.json declaring `@skillbox/core` as a peer dependency only. */
export function peerPackageJson(name: string): Record<string, unknown> {
  return { name, private: true, type: "module", peerDependencies: { "@skillbox/core": "*" } };
}

/**
 * A handler importing both entries of `@skillbox/core`; given `{ name: "ada" }` it answers
 * `{ greeting: "hello ada", denies: true }`.
 */
export const CORE_IMPORTING_HANDLER = [
  'import { defineSkill } from "@skillbox/core";',
  'import { SkillboxError, deny } from "@skillbox/core/handler";',
  "export default defineSkill({",
  "  handler: (input: { name: string }) => ({",
  "    greeting: 'hello ' + input.name,",
  '    denies: deny("no") instanceof SkillboxError,',
  "  }),",
  "});",
  "",
].join("\n");

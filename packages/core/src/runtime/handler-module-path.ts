import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { Skill } from "../types.js";

/**
 * The module file a runtime that loads code elsewhere (a worker thread, a sandbox) imports for
 * `skill`: its `code.modulePath` (set by the loader), or a `file:` URL or absolute path given as `handler`.
 * `where` names that place in the error for a handler registered as a function name.
 */
export function handlerModulePath(skill: Skill, where: string): string {
  if (skill.code !== undefined) return skill.code.modulePath;
  if (skill.handler.startsWith("file:")) return fileURLToPath(skill.handler);
  if (isAbsolute(skill.handler)) return skill.handler;
  throw new SkillboxError(
    "HANDLER_NOT_FOUND",
    `${skill.name}@${skill.version} runs in ${where}, which loads its handler from a module: load it from a ` +
      `skill package, or register it with an absolute path or file: URL as \`handler\` (got "${skill.handler}")`,
  );
}

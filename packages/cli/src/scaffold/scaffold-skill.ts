import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SKILL_NAME_PATTERN, SkillboxError } from "@skillbox/core";
import { displayPath } from "@skillbox/loader";
import {
  handlerTemplate,
  readmeTemplate,
  type SkillTemplateOptions,
  skillManifestTemplate,
} from "./skill-templates.js";

/** What `scaffoldSkill` wrote. */
export interface ScaffoldResult {
  folder: string;
  files: string[];
  /** Packages the handler imports that cannot be found from the folder. */
  missingPackages: string[];
}

/** Packages the scaffolded handler imports. */
const HANDLER_IMPORTS = ["@skillbox/core"];

function isInstalledAbove(name: string, from: string): boolean {
  for (let directory = from; ; directory = dirname(directory)) {
    if (existsSync(join(directory, "node_modules", name, "package.json"))) return true;
    if (dirname(directory) === directory) return false;
  }
}

/**
 * Creates `<parent>/<name>` (a scoped name becomes `<parent>/@scope/name`, where the loader looks
 * for it) with a manifest, a handler and a README. Refuses an existing folder, so nothing is ever
 * overwritten.
 */
export function scaffoldSkill(parent: string, options: SkillTemplateOptions): ScaffoldResult {
  if (!SKILL_NAME_PATTERN.test(options.name)) {
    throw new SkillboxError(
      "USAGE",
      `"${options.name}" is not a skill name; use letters, digits, ".", "_" and "-" (optionally @scope/name)`,
    );
  }
  const folder = resolve(parent, options.name);
  mkdirSync(dirname(folder), { recursive: true });
  try {
    // Not recursive: creating the folder is also the check that it did not exist.
    mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    throw new SkillboxError(
      "ALREADY_EXISTS",
      `${displayPath(folder)} already exists; pick another name or remove the folder first`,
    );
  }
  const files = {
    "skill.json": skillManifestTemplate(options),
    "index.ts": handlerTemplate(options),
    "README.md": readmeTemplate(options),
  };
  const written = Object.entries(files).map(([file, content]) => {
    const path = join(folder, file);
    writeFileSync(path, content, { flag: "wx" });
    return path;
  });
  return {
    folder,
    files: written,
    missingPackages: HANDLER_IMPORTS.filter((name) => !isInstalledAbove(name, folder)),
  };
}

import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { SKILL_NAME_PATTERN, SkillboxError } from "@skillbox/core";
import { displayPath } from "@skillbox/loader/internal";
import { usageError } from "../usage-error.js";
import {
  handlerTemplate,
  packageJsonTemplate,
  readmeTemplate,
  type SkillTemplateOptions,
  skillGitignoreTemplate,
  skillManifestTemplate,
  tsconfigTemplate,
} from "./skill-templates.js";

/** Where and how {@link scaffoldSkill} writes. */
export interface ScaffoldOptions extends SkillTemplateOptions {
  /** The folder the skill folder is created in. */
  parent: string;
  /** The project folder: its `.gitignore` gets `.skillbox/` (the default database's folder). */
  projectRoot: string;
  /** Appended to the commands the README shows (`--dir myskills`), so they work as printed. */
  commandSuffix?: string;
}

/** What `scaffoldSkill` wrote. */
export interface ScaffoldResult {
  folder: string;
  files: string[];
  /** The project's `.gitignore` when `.skillbox/` was added to it (created or appended). */
  gitignore: string | undefined;
}

/** The version of the `@skillbox/core` this CLI runs with: what a new skill's peer range starts at. */
function coreVersion(): string {
  const require = createRequire(import.meta.url);
  const manifest = JSON.parse(readFileSync(require.resolve("@skillbox/core/package.json"), "utf8")) as {
    version: string;
  };
  return manifest.version;
}

/** Adds `.skillbox/` (where the default database lives) to `<projectRoot>/.gitignore` unless it is there. */
function ignoreDataFolder(projectRoot: string): string | undefined {
  const file = join(projectRoot, ".gitignore");
  const existing = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (existing?.split(/\r?\n/).some((line) => /^\/?\.skillbox\/?$/.test(line.trim()))) return undefined;
  const separator = existing === undefined || existing === "" || existing.endsWith("\n") ? "" : "\n";
  appendFileSync(file, `${separator}# skillbox's database and sandbox state\n.skillbox/\n`);
  return file;
}

/**
 * Creates `<parent>/<name>` (a scoped name becomes `<parent>/@scope/name`, where the loader looks
 * for it) with a manifest, a handler, a package.json, a tsconfig.json, a .gitignore and a README,
 * and makes sure the project's .gitignore has `.skillbox/`. Refuses an existing folder, so
 * nothing is ever overwritten.
 */
export function scaffoldSkill(options: ScaffoldOptions): ScaffoldResult {
  if (!SKILL_NAME_PATTERN.test(options.name)) {
    throw usageError(
      "USAGE",
      `"${options.name}" is not a skill name; use letters, digits, ".", "_" and "-" (optionally @scope/name)`,
    );
  }
  const folder = resolve(options.parent, options.name);
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
    "package.json": packageJsonTemplate(options, { core: coreVersion() }),
    "tsconfig.json": tsconfigTemplate(),
    ".gitignore": skillGitignoreTemplate(),
    "README.md": readmeTemplate(options, options.commandSuffix),
  };
  const written = Object.entries(files).map(([file, content]) => {
    const path = join(folder, file);
    writeFileSync(path, content, { flag: "wx" });
    return path;
  });
  return { folder, files: written, gitignore: ignoreDataFolder(options.projectRoot) };
}

import { existsSync, readFileSync } from "node:fs";
import { join, posix, sep } from "node:path";

/** One line of a `.npmignore` (gitignore syntax). */
interface IgnoreRule {
  pattern: RegExp;
  /** `!pattern`: includes again what an earlier line left out. */
  negated: boolean;
  /** `pattern/`: matches folders only. */
  folderOnly: boolean;
  /** Has a `/` before its end: matched against the path from the `.npmignore`'s folder, else against each name. */
  anchored: boolean;
}

/** Files a published package always holds (npm's rule), whatever `files` says. */
const ALWAYS_PUBLISHED = /^(?:package\.json|readme(?:\..*)?|licen[cs]e(?:\..*)?)$/i;

/** Skillbox manifests: a package without them is no package, so they always count. */
const MANIFESTS = new Set(["skill.json", "interceptor.json", "package.json"]);

/** A glob (`*`, `**`, `?`, `[…]`) as a regular expression over `/`-separated paths. */
function globToRegExp(glob: string): RegExp {
  let source = "";
  for (let index = 0; index < glob.length; index++) {
    const character = glob[index]!;
    if (character === "*" && glob[index + 1] === "*") {
      index++;
      if (glob[index + 1] === "/") {
        index++;
        source += "(?:.*/)?";
      } else source += ".*";
    } else if (character === "*") source += "[^/]*";
    else if (character === "?") source += "[^/]";
    else if (character === "[" && glob.indexOf("]", index + 2) !== -1) {
      const end = glob.indexOf("]", index + 2);
      source += `[${glob
        .slice(index + 1, end)
        .replace(/^!/, "^")
        .replace(/\\/g, "\\\\")}]`;
      index = end;
    } else source += character.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** The rules of a `.npmignore` text. */
function parseIgnoreFile(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    if (negated) line = line.slice(1);
    const folderOnly = line.endsWith("/");
    if (folderOnly) line = line.replace(/\/+$/, "");
    const anchored = line.includes("/");
    line = line.replace(/^\/+/, "");
    if (line === "") continue;
    rules.push({ pattern: globToRegExp(line), negated, folderOnly, anchored });
  }
  return rules;
}

/** A `files` entry of package.json, as a rule over the package's top-level paths. */
interface FilesRule {
  pattern: RegExp;
  negated: boolean;
}

function readJsonObject(file: string): Record<string, unknown> | undefined {
  // Most packages have no package.json: answered without the cost of a thrown ENOENT.
  if (!existsSync(file)) return undefined;
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A path from a manifest field (`main`, `skillbox.handler`) in the `/`-separated form of the rules. */
function normalised(path: unknown): string | undefined {
  return typeof path === "string"
    ? posix.normalize(path.replace(/\\/g, "/")).replace(/^(?:\.\/)+/, "")
    : undefined;
}

/** Options of {@link PublishedFiles.read}. */
export interface PublishedFilesOptions {
  /**
   * The folders (relative to the package, `""` for the package itself) that hold a
   * `.npmignore`, when a walk already knows; by default each folder is looked at.
   */
  ignoreFolders?: ReadonlySet<string>;
}

/**
 * Which files of a package folder a published package would hold: what `npm pack` leaves out by
 * the package.json `files` field and by `.npmignore` files is left out here too, and so is
 * `test/` (of the package, and of each member of a bundle) — tests never run as a skill's code.
 * package.json, README, LICENSE, `main`, `skillbox.handler` and the Skillbox manifests always
 * count. The package hash covers these files only, so editing a test or a file the package
 * does not publish reloads nothing.
 *
 * `files` entries are globs matched against the path from the package folder (an entry naming
 * a folder covers what it holds; `!entry` takes out again). `.npmignore` lines follow gitignore:
 * a line without `/` matches a name at any depth, a folder left out takes what it holds with it,
 * and the package folder's own `.npmignore` does not override `files` (as with npm).
 */
export class PublishedFiles {
  private readonly files: FilesRule[] | undefined;
  private readonly alwaysPublished: Set<string>;
  private readonly bundle: boolean;
  private readonly ignoreRules = new Map<string, IgnoreRule[] | undefined>();

  private constructor(
    private readonly root: string,
    packageJson: Record<string, unknown> | undefined,
    private readonly options: PublishedFilesOptions,
  ) {
    const files = packageJson?.files;
    this.files = Array.isArray(files)
      ? files
          .filter((entry): entry is string => typeof entry === "string" && entry.trim() !== "")
          .map((entry) => {
            const negated = entry.startsWith("!");
            const path = (normalised(negated ? entry.slice(1) : entry) ?? "").replace(/\/+$/, "");
            return { pattern: globToRegExp(path), negated };
          })
      : undefined;
    const skillbox = packageJson?.skillbox as Record<string, unknown> | undefined;
    this.bundle = typeof skillbox === "object" && skillbox !== null && skillbox.kind === "bundle";
    this.alwaysPublished = new Set(
      [normalised(packageJson?.main), normalised(skillbox?.handler)].filter(
        (path): path is string => path !== undefined,
      ),
    );
  }

  /** The rules for the package folder `root` (its package.json is read now). */
  static read(root: string, options: PublishedFilesOptions = {}): PublishedFiles {
    return new PublishedFiles(root, readJsonObject(join(root, "package.json")), options);
  }

  /** Whether the file at `path` (relative to the package folder) is published. */
  includes(path: string): boolean {
    const parts = path.split(sep).join("/").split("/");
    const name = parts[parts.length - 1]!;
    // `test/` of the package and of each member of a bundle.
    if (parts.length > 1 && parts[0] === "test") return false;
    if (this.bundle && parts.length > 2 && parts[1] === "test") return false;
    const relative = parts.join("/");
    if (parts.length === 1 && ALWAYS_PUBLISHED.test(name)) return true;
    if (parts.length <= (this.bundle ? 2 : 1) && MANIFESTS.has(name)) return true;
    if (this.alwaysPublished.has(relative)) return true;
    if (this.files !== undefined && !this.inFiles(parts)) return false;
    for (let depth = 1; depth < parts.length; depth++) {
      if (this.ignored(parts.slice(0, depth), true)) return false;
    }
    return !this.ignored(parts, false);
  }

  /**
   * Whether the folder at `path` (relative to the package folder) may hold published files: not
   * a `test/` folder, nor one a `.npmignore` leaves out.
   */
  includesFolder(path: string): boolean {
    const parts = path.split(sep).join("/").split("/");
    if (parts[0] === "test" || (this.bundle && parts.length > 1 && parts[1] === "test")) return false;
    for (let depth = 1; depth <= parts.length; depth++) {
      if (this.ignored(parts.slice(0, depth), true)) return false;
    }
    return true;
  }

  /** Whether `files` covers the path: an entry matches it or one of the folders it is in. */
  private inFiles(parts: readonly string[]): boolean {
    let included = false;
    for (const rule of this.files ?? []) {
      for (let depth = 1; depth <= parts.length; depth++) {
        if (rule.pattern.test(parts.slice(0, depth).join("/"))) {
          included = !rule.negated;
          break;
        }
      }
    }
    return included;
  }

  /** Whether the `.npmignore` files of the folders above `parts` leave it out (the deepest decides). */
  private ignored(parts: readonly string[], folder: boolean): boolean {
    let ignored = false;
    for (let depth = 0; depth < parts.length; depth++) {
      // The package folder's own `.npmignore` does not override `files`.
      if (depth === 0 && this.files !== undefined) continue;
      const rules = this.rulesOf(parts.slice(0, depth).join("/"));
      if (rules === undefined) continue;
      const inside = parts.slice(depth).join("/");
      const name = parts[parts.length - 1]!;
      for (const rule of rules) {
        if (rule.folderOnly && !folder) continue;
        if (rule.pattern.test(rule.anchored ? inside : name)) ignored = !rule.negated;
      }
    }
    return ignored;
  }

  private rulesOf(folder: string): IgnoreRule[] | undefined {
    if (this.ignoreRules.has(folder)) return this.ignoreRules.get(folder);
    let rules: IgnoreRule[] | undefined;
    if (this.options.ignoreFolders === undefined || this.options.ignoreFolders.has(folder)) {
      try {
        rules = parseIgnoreFile(readFileSync(join(this.root, folder, ".npmignore"), "utf8"));
      } catch {
        rules = undefined;
      }
    }
    this.ignoreRules.set(folder, rules);
    return rules;
  }
}

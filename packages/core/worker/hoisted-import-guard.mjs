// Shared by the loader (inline modules) and the worker-thread entry: which packages a skill may
// load from a `node_modules` above its own folder. Plain JavaScript, so it runs unbuilt.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, sep } from "node:path";

const NODE_MODULES = `${sep}node_modules${sep}`;

const DEPENDENCY_FIELDS = ["dependencies", "optionalDependencies", "peerDependencies", "devDependencies"];

/** The package a file inside `node_modules` belongs to (the last `node_modules/<name>` on its path). */
function packageNameAt(file) {
  const after = file.slice(file.lastIndexOf(NODE_MODULES) + NODE_MODULES.length).split(sep);
  if (after[0]?.startsWith("@")) return after[1] === undefined ? undefined : `${after[0]}/${after[1]}`;
  return after[0] === "" ? undefined : after[0];
}

function realPathOf(path) {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function readManifest(folder) {
  const file = join(folder, "package.json");
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8"));
    return parsed !== null && typeof parsed === "object" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuses the packages a skill only reaches because they were hoisted next to it for someone else.
 *
 * Node looks a bare import up in every `node_modules` above the importing file. In npm's flat
 * layout the project's `node_modules` holds the CLI's own dependencies (`zod`, say), so a skill
 * that never declared `zod` would run in that project and fail in the next one (pnpm's strict
 * layout, a container, another install). A package is accepted when it resolved inside the
 * skill's own folder, or when a package.json between the skill and the `node_modules` it was
 * found in declares it (the skill's, or the project's that owns that folder); a `node_modules`
 * whose folder has no package.json belongs to no one, and is accepted as it is.
 */
export class HoistedImportGuard {
  #root;
  #importer;
  #provided;
  #manifests = new Map();

  /**
   * `root` is the skill package's folder; `importer` names the module being imported in errors;
   * `provided` are the folders of packages the host provides to every handler (its own
   * `@skillbox/core`), which load wherever they are installed.
   */
  constructor(root, importer, { provided = [] } = {}) {
    this.#root = realPathOf(root);
    this.#importer = importer;
    this.#provided = provided.map((folder) => `${realPathOf(folder)}${sep}`);
  }

  /**
   * An error shaped as Node's `ERR_MODULE_NOT_FOUND` (so the missing-package message names the
   * fix) when `file`, a module about to be loaded, belongs to a package the skill did not
   * declare; undefined when it may load.
   */
  refusalOf(file) {
    const real = realPathOf(file);
    const firstNodeModules = real.indexOf(NODE_MODULES);
    if (firstNodeModules < 0 || real.startsWith(`${this.#root}${sep}`)) return undefined;
    if (this.#provided.some((folder) => real.startsWith(folder))) return undefined;
    const owner = real.slice(0, firstNodeModules);
    // Only folders above the skill: anything else was not found by walking up from it.
    if (!this.#root.startsWith(`${owner}${sep}`)) return undefined;
    const name = packageNameAt(real);
    if (name === undefined || !existsSync(join(owner, "package.json"))) return undefined;
    for (let folder = this.#root; ; folder = dirname(folder)) {
      if (this.#declares(folder, name)) return undefined;
      if (folder === owner || dirname(folder) === folder) break;
    }
    return Object.assign(new Error(`Cannot find package '${name}' imported from ${this.#importer}`), {
      code: "ERR_MODULE_NOT_FOUND",
    });
  }

  #declares(folder, name) {
    if (!this.#manifests.has(folder)) this.#manifests.set(folder, readManifest(folder));
    const manifest = this.#manifests.get(folder);
    return DEPENDENCY_FIELDS.some((field) => {
      const dependencies = manifest?.[field];
      return dependencies !== null && typeof dependencies === "object" && name in dependencies;
    });
  }
}

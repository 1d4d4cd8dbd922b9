import { basename, isAbsolute, relative, sep } from "node:path";
import type { JsonSchema, Skill, SkillExample } from "@skillbox/core";
import type { PackageLoadError, PackageLoadErrors } from "./package-load-error-log.js";

/**
 * A skill as the API shows it. Loader internals — the handler reference, the source path, the
 * content hash, sandbox settings — stay out: they describe the server's disk, not the skill.
 */
export interface SkillView {
  id: string;
  name: string;
  version: string;
  description: string;
  /** The owner id; `system` and `public` skills are visible to every caller. */
  owner: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema | null;
  runtime: string;
  tags: string[];
  enabled: boolean;
  /** Per-attempt timeout in ms; null means the executor's default. */
  timeoutMs: number | null;
  createdAt: string;
  updatedAt: string;
  /** Where the skill comes from, without the server's disk paths. */
  origin: SkillOrigin;
  /**
   * The last failed load of the skill's package since it last loaded (the last good version
   * keeps serving meanwhile); null when none is known — always null for a server not given
   * `loadErrors` (see `PackageLoadErrors`).
   */
  lastLoadError: SkillLoadErrorView | null;
  /** The manifest's `examples` (`{ description?, input, output? }` each); empty when it has none. */
  examples: SkillExample[];
}

/**
 * Where a skill comes from: `folder` (a package in a watched folder), `npm` (an installed npm
 * package with a `"skillbox"` field) or `api` (registered by code or through the API).
 */
export interface SkillOrigin {
  kind: "folder" | "npm" | "api";
  /** The package: its folder under the watched folder (`echo`, `@acme/weather`), or its npm name; null for `api`. */
  package: string | null;
}

/** A package's load failure as skill views show it. */
export interface SkillLoadErrorView {
  /** The file at fault, relative to the package folder (`skill.json`, `handler.ts`). */
  file: string;
  code: string;
  message: string;
  /** When the failure happened (ISO). */
  at: string;
}

/** Options of {@link toSkillView}. */
export interface SkillViewOptions {
  /** Where the last load errors of packages are known. */
  loadErrors?: PackageLoadErrors;
}

/** The API's view of a registry skill. */
export function toSkillView(skill: Skill, options: SkillViewOptions = {}): SkillView {
  const packageRoot = packageRootOf(skill);
  const loadError = packageRoot === undefined ? undefined : options.loadErrors?.lastLoadError(packageRoot);
  return {
    id: skill.id,
    name: skill.name,
    version: skill.version,
    description: skill.description,
    owner: skill.apiKeyId,
    inputSchema: skill.schema.input,
    outputSchema: skill.schema.output ?? null,
    runtime: skill.runtime,
    tags: skill.tags,
    enabled: skill.enabled,
    timeoutMs: skill.timeoutMs ?? null,
    createdAt: skill.createdAt,
    updatedAt: skill.updatedAt,
    origin: originOf(skill, packageRoot),
    lastLoadError: loadError === undefined ? null : toLoadErrorView(loadError),
    examples: skill.examples ?? [],
  };
}

/** The package folder of a skill a loader registered (its `source`), else undefined. */
function packageRootOf(skill: Skill): string | undefined {
  return skill.source !== "api" && isAbsolute(skill.source) ? skill.source : undefined;
}

/**
 * The loader records the folder or npm project it found a package through as `metadata.origin`
 * (`npm:<project>` for npm); a path inside it names the package without saying where the disk
 * keeps it.
 */
function originOf(skill: Skill, packageRoot: string | undefined): SkillOrigin {
  if (packageRoot === undefined) return { kind: "api", package: null };
  const origin = skill.metadata?.origin;
  if (typeof origin === "string" && origin.startsWith("npm:")) {
    const parts = packageRoot.split(sep);
    const modules = parts.lastIndexOf("node_modules");
    const name = modules === -1 ? basename(packageRoot) : parts.slice(modules + 1).join("/");
    return { kind: "npm", package: name };
  }
  const inside = typeof origin === "string" ? relative(origin, packageRoot) : "";
  const name =
    inside === "" || inside.startsWith("..") || isAbsolute(inside) ? basename(packageRoot) : inside;
  return { kind: "folder", package: name.split(sep).join("/") };
}

function toLoadErrorView(failure: PackageLoadError): SkillLoadErrorView {
  const file = relative(failure.root, failure.file);
  return {
    file: (file === "" || file.startsWith("..") || isAbsolute(file) ? basename(failure.file) : file)
      .split(sep)
      .join("/"),
    code: failure.code,
    // The loader's messages name paths from the working directory, or whole when outside it.
    message: failure.message.split(failure.root).join(basename(failure.root)),
    at: new Date(failure.at).toISOString(),
  };
}

/** A skill in `GET /api/skills` (one per name): the version a bare name runs, and all visible versions. */
export interface LatestSkillView extends SkillView {
  /** Every version of this name the caller can see, highest first. */
  versions: string[];
}

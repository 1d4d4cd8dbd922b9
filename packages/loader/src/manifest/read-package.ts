import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { SkillboxError } from "@skillbox/core";
import { formatZodIssues } from "@skillbox/core/internal";
import type { z } from "zod";
import {
  type InterceptorManifest,
  interceptorManifestSchema,
  packageBundleFieldSchema,
  packageInterceptorFieldSchema,
  packageSkillFieldSchema,
  type SkillManifest,
  skillManifestSchema,
} from "./manifest-schemas.js";
import { resolveInsidePackage } from "./resolve-inside-package.js";

/** A skill package found on disk, manifest validated. */
export interface SkillPackage {
  kind: "skill";
  /** Absolute path of the package folder. */
  root: string;
  /** The manifest file it was read from. */
  manifestFile: string;
  manifest: SkillManifest;
  /** Real path of the handler module, proven to be inside the package. */
  handlerPath: string;
}

/** An interceptor plugin found on disk, manifest validated. */
export interface InterceptorPackage {
  kind: "interceptor";
  root: string;
  manifestFile: string;
  manifest: InterceptorManifest;
  handlerPath: string;
}

/** What a folder holds. */
export type PackageDescriptor = SkillPackage | InterceptorPackage;

/** A path for messages: relative to the working directory when that is shorter. */
export function displayPath(path: string): string {
  const fromCwd = relative(process.cwd(), path);
  return fromCwd !== "" && !fromCwd.startsWith("..") ? fromCwd : path;
}

/** Reads and parses a manifest; undefined when there is none. (Synchronous: see hashPackageFiles.) */
async function readJson(file: string): Promise<unknown | undefined> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    // ENOTDIR: the "package folder" is a stray file (a README beside the packages).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new SkillboxError(
      "MANIFEST_INVALID",
      `${displayPath(file)}: cannot be read (${(error as Error).message})`,
      {
        cause: error,
        data: { file },
      },
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SkillboxError(
      "MANIFEST_INVALID",
      `${displayPath(file)}: is not valid JSON (${(error as Error).message}); fix the syntax`,
      { cause: error, data: { file } },
    );
  }
}

function parse<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  file: string,
  prefix = "",
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const message = formatZodIssues(parsed.error, displayPath(file), prefix);
  throw new SkillboxError("MANIFEST_INVALID", message, { data: { file, issues: parsed.error.issues } });
}

/** The parts every descriptor shares, with the handler path proven to stay inside the package. */
function located<Manifest extends { handler: string }>(
  root: string,
  manifestFile: string,
  manifest: Manifest,
  handlerField: string,
): { root: string; manifestFile: string; manifest: Manifest; handlerPath: string } {
  const handlerPath = resolveInsidePackage(root, manifest.handler, displayPath(manifestFile), handlerField);
  return { root, manifestFile, manifest, handlerPath };
}

/**
 * Reads the package in `root`: `skill.json`, `interceptor.json`, or a package.json with a
 * `"skillbox"` field (name, version and description then come from package.json). Returns
 * undefined when the folder holds none of them; throws `MANIFEST_INVALID` naming the file and
 * the field when one is malformed. A bundle's package.json is not a package (its members are).
 */
export async function readPackage(root: string): Promise<PackageDescriptor | undefined> {
  const skillFile = join(root, "skill.json");
  const interceptorFile = join(root, "interceptor.json");
  const [skillJson, interceptorJson] = await Promise.all([readJson(skillFile), readJson(interceptorFile)]);
  if (skillJson !== undefined && interceptorJson !== undefined) {
    throw new SkillboxError(
      "MANIFEST_INVALID",
      `${displayPath(root)}: has both skill.json and interceptor.json; a package is one or the other`,
      { data: { file: root } },
    );
  }
  if (skillJson !== undefined) {
    const manifest = parse(skillManifestSchema, skillJson, skillFile);
    return { kind: "skill", ...located(root, skillFile, manifest, "handler") };
  }
  if (interceptorJson !== undefined) {
    const manifest = parse(interceptorManifestSchema, interceptorJson, interceptorFile);
    return { kind: "interceptor", ...located(root, interceptorFile, manifest, "handler") };
  }
  return readPackageJson(root);
}

async function readPackageJson(root: string): Promise<PackageDescriptor | undefined> {
  const file = join(root, "package.json");
  const json = (await readJson(file)) as Record<string, unknown> | undefined;
  if (json === undefined || typeof json !== "object" || json === null || json.skillbox === undefined)
    return undefined;
  const field = json.skillbox as { kind?: unknown };
  const identity = { name: json.name, version: json.version, description: json.description };
  if (field?.kind === "bundle") {
    parse(packageBundleFieldSchema, field, file, "skillbox.");
    return undefined;
  }
  if (field?.kind === "interceptor") {
    const { kind: _kind, ...rest } = parse(packageInterceptorFieldSchema, field, file, "skillbox.");
    const manifest = parse(interceptorManifestSchema, { ...rest, ...identity }, file);
    return { kind: "interceptor", ...located(root, file, manifest, "skillbox.handler") };
  }
  const { kind: _kind, ...rest } = parse(packageSkillFieldSchema, field, file, "skillbox.");
  const manifest = parse(
    skillManifestSchema,
    { ...rest, ...identity, description: identity.description ?? rest.description },
    file,
  );
  return { kind: "skill", ...located(root, file, manifest, "skillbox.handler") };
}

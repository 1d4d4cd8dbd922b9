import { basename } from "node:path";
import { type DefinedSkill, type JsonSchema, SkillboxError } from "@skillbox/core";
import { findJsonSchemaProblem } from "@skillbox/core/internal";
import { firstSchemaDifference } from "./compare-json-schemas.js";
import { displayPath, type SkillPackage } from "./read-package.js";

/** A skill's input and output JSON Schemas, wherever each was declared. */
export interface SkillSchemas {
  input: JsonSchema | undefined;
  output: JsonSchema | undefined;
}

type SchemaField = keyof SkillSchemas;

/** `input` in skill.json, `skillbox.input` in a package.json. */
function manifestFieldOf(descriptor: SkillPackage, field: SchemaField): string {
  return basename(descriptor.manifestFile) === "package.json" ? `skillbox.${field}` : field;
}

/**
 * Whether loading the package needs its module for schemas: the manifest declares no `input`, so
 * the schemas come from `defineSkill`. A manifest that declares `input` is the schema source: its
 * module is imported lazily (a thousand packages start fast, and worker or container code never
 * runs on the host), and `defineSkill` schemas in it are compared with the manifest's whenever
 * it is imported — on reload, on the first call, and by `skillbox validate`.
 */
export function needsModuleForSchemas(descriptor: SkillPackage): boolean {
  return descriptor.manifest.input === undefined;
}

function refuse(field: string, message: string, file: string): SkillboxError {
  return new SkillboxError("MANIFEST_INVALID", message, { data: { file, field } });
}

function checkCompiles(descriptor: SkillPackage, field: SchemaField, schema: JsonSchema, inCode: boolean) {
  const problem = findJsonSchemaProblem(schema);
  if (problem === undefined) return;
  if (inCode) {
    const file = displayPath(descriptor.handlerPath);
    throw refuse(
      field,
      `${file}: defineSkill({ ${field} }) is not a valid JSON Schema (${problem}); fix it so calls can be validated`,
      descriptor.handlerPath,
    );
  }
  const name = manifestFieldOf(descriptor, field);
  throw refuse(
    name,
    `${displayPath(descriptor.manifestFile)}: \`${name}\` is not a valid JSON Schema (${problem}); fix it so calls can be validated`,
    descriptor.manifestFile,
  );
}

function shown(value: unknown): string {
  return value === undefined ? "(absent)" : JSON.stringify(value);
}

function resolveField(descriptor: SkillPackage, field: SchemaField, defined: DefinedSkill | undefined) {
  const inManifest = descriptor.manifest[field];
  const inCode = defined?.[field];
  if (inManifest !== undefined) checkCompiles(descriptor, field, inManifest, false);
  if (inCode !== undefined) checkCompiles(descriptor, field, inCode, true);
  if (inCode === undefined) return inManifest;
  if (inManifest === undefined) {
    // A manifest with `input` is the schema source; an `output` only in code would be registered
    // on reload (module imported) but not at start (module not imported yet): refuse the mix.
    if (descriptor.manifest.input === undefined) return inCode;
    const name = manifestFieldOf(descriptor, field);
    throw refuse(
      name,
      `${displayPath(descriptor.handlerPath)} defineSkill({ ${field} }) declares a schema that ${displayPath(descriptor.manifestFile)} lacks, while \`${manifestFieldOf(descriptor, "input")}\` there makes the manifest the schema source: declare \`${name}\` in the manifest, or move every schema into defineSkill`,
      descriptor.manifestFile,
    );
  }
  // zod closes every object of an output schema (`additionalProperties: false`) although the
  // handler's return value is never parsed by zod: not a difference a skill author meant.
  const difference = firstSchemaDifference(inManifest, inCode, { openObjects: field === "output" });
  if (difference === undefined) return inManifest;
  const name = manifestFieldOf(descriptor, field);
  throw refuse(
    name,
    `${displayPath(descriptor.manifestFile)}: \`${name}\` and ${displayPath(descriptor.handlerPath)} defineSkill({ ${field} }) disagree at ${difference.path} (${shown(difference.left)} vs ${shown(difference.right)}); declare the schema in one place`,
    descriptor.manifestFile,
  );
}

/**
 * The schemas a skill package registers. Each is declared in the manifest or through
 * `defineSkill` in its module (zod converted to JSON Schema), and taken from where it is; when
 * both declare one they must agree (see `firstSchemaDifference`), and every schema must compile
 * as the executor compiles it. Throws `MANIFEST_INVALID` naming the file and field otherwise.
 */
export function resolveSkillSchemas(
  descriptor: SkillPackage,
  defined: DefinedSkill | undefined,
): SkillSchemas {
  return {
    input: resolveField(descriptor, "input", defined),
    output: resolveField(descriptor, "output", defined),
  };
}

import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type DefinedSkill, isSkillboxError, SkillboxError } from "@skillbox/core";
import {
  checkSyntax,
  displayPath,
  importInterceptorModule,
  importSkillModule,
  listPackageFolders,
  needsModuleForSchemas,
  type PackageDescriptor,
  readPackage,
  resolveSkillSchemas,
  type SkillPackage,
} from "@skillbox/loader/internal";
import { typecheckPackage } from "./typecheck-package.js";

/** One thing wrong with a package. */
export interface ValidationProblem {
  /** The package folder. */
  root: string;
  /** The file at fault (manifest or handler module). */
  file: string;
  /** A `SkillboxError` code, or `TYPE_ERROR` for what tsc reports. */
  code: string;
  /** The manifest field at fault, when there is one. */
  field?: string;
  message: string;
}

/** A package that was looked at. */
export interface ValidatedPackage {
  root: string;
  /** Undefined when the manifest could not be read. */
  kind?: "skill" | "interceptor";
  name?: string;
  version?: string;
  ok: boolean;
}

/** Something `validate` could not check, which does not fail it (no TypeScript to typecheck with). */
export interface ValidationWarning {
  root: string;
  message: string;
}

/** What `validatePackages` found. */
export interface ValidationReport {
  packages: ValidatedPackage[];
  problems: ValidationProblem[];
  /** Present when some check was skipped. */
  warnings?: ValidationWarning[];
  ok: boolean;
}

/** The runtimes the `skillbox` command provides. */
const KNOWN_RUNTIMES = ["inline", "worker", "container"];

/** One problem per message line (zod reports one line per field), with the field picked out. */
function problemsOf(root: string, error: unknown): ValidationProblem[] {
  const code = isSkillboxError(error) ? error.code : "HANDLER_INVALID";
  const dataFile = isSkillboxError(error) ? (error.data as { file?: unknown } | undefined)?.file : undefined;
  const dataField = isSkillboxError(error)
    ? (error.data as { field?: unknown } | undefined)?.field
    : undefined;
  const file = typeof dataFile === "string" ? displayPath(resolve(dataFile)) : displayPath(root);
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n").map((line) => {
    const field =
      /^[^`]*?: (?:unknown field )?`([^`]+)`/.exec(line)?.[1] ??
      (typeof dataField === "string" ? dataField : undefined);
    return field === undefined
      ? { root, file, code, message: line }
      : { root, file, code, field, message: line };
  });
}

/**
 * What the executor of the `skillbox` command would refuse at run time although the manifest
 * schema accepts it.
 */
function checkRuntime(descriptor: PackageDescriptor): void {
  if (descriptor.kind !== "skill") return;
  const { manifest, manifestFile } = descriptor;
  const runtime = manifest.runtime ?? "inline";
  if (!KNOWN_RUNTIMES.includes(runtime)) {
    throw new SkillboxError(
      "MANIFEST_INVALID",
      `${displayPath(manifestFile)}: \`runtime\` must be one of ${KNOWN_RUNTIMES.join(", ")}, got ${JSON.stringify(runtime)}`,
      { data: { file: manifestFile } },
    );
  }
}

/**
 * Whether validate imports a skill's module: the loader does for inline skills (on reload and on
 * the first call) and where `defineSkill` supplies the schemas. Worker and container code never
 * runs on the host when it serves, so it is imported here only when the file calls `defineSkill`:
 * validate is the one place those schemas are compared with the manifest's. Importing evaluates
 * the module's top level, never a handler.
 */
function importedByValidate(descriptor: SkillPackage): boolean {
  if ((descriptor.manifest.runtime ?? "inline") === "inline" || needsModuleForSchemas(descriptor))
    return true;
  try {
    return /\bdefineSkill\b/.test(readFileSync(descriptor.handlerPath, "utf8"));
  } catch {
    // Unreadable: importing it reports why.
    return true;
  }
}

/** Imports the module as the loader does; returns its `defineSkill` value, if that is the export. */
async function checkHandlerExport(descriptor: SkillPackage): Promise<DefinedSkill | undefined> {
  const { defined } = await importSkillModule(descriptor.handlerPath, { root: descriptor.root });
  return defined;
}

/**
 * The schemas the loader would register, checked as it checks them: each compiles as the
 * executor compiles it, and a schema declared in both the manifest and `defineSkill` agrees.
 */
async function checkSkillModule(descriptor: SkillPackage): Promise<ValidationProblem[]> {
  const problems: ValidationProblem[] = [];
  let defined: DefinedSkill | undefined;
  try {
    if (importedByValidate(descriptor)) defined = await checkHandlerExport(descriptor);
  } catch (error) {
    problems.push(...problemsOf(descriptor.root, error));
  }
  try {
    resolveSkillSchemas(descriptor, defined);
  } catch (error) {
    problems.push(...problemsOf(descriptor.root, error));
  }
  return problems;
}

async function validatePackage(
  root: string,
): Promise<
  { entry: ValidatedPackage; descriptor?: PackageDescriptor; problems: ValidationProblem[] } | undefined
> {
  let descriptor: PackageDescriptor | undefined;
  try {
    descriptor = await readPackage(root);
    if (descriptor !== undefined) checkRuntime(descriptor);
  } catch (error) {
    return { entry: { root, ok: false }, problems: problemsOf(root, error) };
  }
  if (descriptor === undefined) return undefined;
  const problems: ValidationProblem[] = [];
  try {
    await checkSyntax(descriptor.handlerPath);
    // An interceptor is loaded as the host loads it: imported, and its factory called with the
    // manifest's options, so a missing import or options the factory refuses show up here.
    if (descriptor.kind === "interceptor") await importInterceptorModule(descriptor);
    else problems.push(...(await checkSkillModule(descriptor)));
  } catch (error) {
    problems.push(...problemsOf(root, error));
  }
  const { name, version } = descriptor.manifest;
  return {
    entry: {
      root,
      kind: descriptor.kind,
      name,
      ...(version === undefined ? {} : { version }),
      ok: problems.length === 0,
    },
    descriptor,
    problems,
  };
}

/** A second folder with the same identity is refused by the loader: report it here already. */
function duplicateProblems(
  validated: { entry: ValidatedPackage; descriptor?: PackageDescriptor }[],
): ValidationProblem[] {
  const holders = new Map<string, string>();
  const problems: ValidationProblem[] = [];
  for (const { entry, descriptor } of validated) {
    if (descriptor === undefined) continue;
    const identity =
      descriptor.kind === "skill"
        ? `${descriptor.manifest.name}@${descriptor.manifest.version}`
        : `interceptor "${descriptor.manifest.name}"`;
    const holder = holders.get(identity);
    if (holder === undefined) {
      holders.set(identity, entry.root);
      continue;
    }
    entry.ok = false;
    problems.push({
      root: entry.root,
      file: displayPath(descriptor.manifestFile),
      code: "MANIFEST_INVALID",
      message: `${displayPath(descriptor.manifestFile)}: ${identity} is already provided by ${displayPath(holder)}; rename it, change its \`version\`, or remove one of the folders`,
    });
  }
  return problems;
}

/**
 * Checks every package in `folder` (or `folder` itself when it is a package) without running
 * any handler: manifests against their schema, handler paths, handler syntax, the default export
 * of modules the loader imports, interceptor factories called with their manifest's `options`
 * (a plugin that would not load at start is caught before it), runtimes, duplicate names, that
 * every JSON Schema compiles as the executor compiles it, that a schema declared in both the
 * manifest and `defineSkill` agrees, and — for a package with a `tsconfig.json` — its types
 * (`TYPE_ERROR` problems; a warning when no TypeScript is installed to check them with).
 */
export async function validatePackages(folder: string): Promise<ValidationReport> {
  const directory = resolve(folder);
  if (!existsSync(directory)) {
    throw new SkillboxError("NOT_FOUND", `${displayPath(directory)}: no such folder`);
  }
  const ownManifest = await readPackage(directory).then(
    (descriptor) => descriptor !== undefined,
    () => true,
  );
  const roots = ownManifest ? [directory] : (await listPackageFolders(directory)).sort();
  const validated = (await Promise.all(roots.map(validatePackage))).filter((result) => result !== undefined);
  const problems = [...validated.flatMap((result) => result.problems), ...duplicateProblems(validated)];
  const warnings: ValidationWarning[] = [];
  // One at a time: each tsc run is a whole-program check, heavy on a small machine.
  for (const { entry, descriptor } of validated) {
    if (descriptor === undefined) continue;
    const result = await typecheckPackage(entry.root);
    if (result.status === "skipped") {
      if (result.reason !== "no tsconfig.json") warnings.push({ root: entry.root, message: result.reason });
      continue;
    }
    for (const diagnostic of result.diagnostics) {
      entry.ok = false;
      problems.push({
        root: entry.root,
        file: displayPath(diagnostic.file),
        code: "TYPE_ERROR",
        message: diagnostic.message,
      });
    }
  }
  return {
    packages: validated.map((result) => result.entry),
    problems,
    ...(warnings.length === 0 ? {} : { warnings }),
    ok: problems.length === 0,
  };
}

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { isDefinedSkill, isSkillboxError, SkillboxError } from "@skillbox/core";
import {
  checkSyntax,
  displayPath,
  importFresh,
  importInterceptorModule,
  listPackageFolders,
  type PackageDescriptor,
  readPackage,
  type SkillPackage,
} from "@skillbox/loader";

/** One thing wrong with a package. */
export interface ValidationProblem {
  /** The package folder. */
  root: string;
  /** The file at fault (manifest or handler module). */
  file: string;
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

/** What `validatePackages` found. */
export interface ValidationReport {
  packages: ValidatedPackage[];
  problems: ValidationProblem[];
  ok: boolean;
}

/** The runtimes the `skillbox` command provides. */
const KNOWN_RUNTIMES = ["inline", "worker", "container"];

/** One problem per message line (zod reports one line per field), with the field picked out. */
function problemsOf(root: string, error: unknown): ValidationProblem[] {
  const code = isSkillboxError(error) ? error.code : "HANDLER_INVALID";
  const dataFile = isSkillboxError(error) ? (error.data as { file?: unknown } | undefined)?.file : undefined;
  const file = typeof dataFile === "string" ? displayPath(resolve(dataFile)) : displayPath(root);
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n").map((line) => {
    const field = /^[^`]*?: (?:unknown field )?`([^`]+)`/.exec(line)?.[1];
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
 * The loader imports a skill's module at load time for inline skills (on reload) and skills whose
 * schemas come from `defineSkill`; worker and container code never runs on the host. Importing
 * evaluates the module's top level, never a handler.
 */
function importedOnLoad(descriptor: SkillPackage): boolean {
  return (descriptor.manifest.runtime ?? "inline") === "inline" || descriptor.manifest.input === undefined;
}

async function checkHandlerExport(descriptor: SkillPackage): Promise<void> {
  let exported: unknown;
  try {
    exported = await importFresh(descriptor.handlerPath);
  } catch (error) {
    throw new SkillboxError(
      "HANDLER_INVALID",
      `${displayPath(descriptor.handlerPath)}: failed to load: ${(error as Error).message}`,
      { cause: error, data: { file: descriptor.handlerPath } },
    );
  }
  if (typeof exported !== "function" && !isDefinedSkill(exported)) {
    throw new SkillboxError(
      "HANDLER_INVALID",
      `${displayPath(descriptor.handlerPath)}: the default export must be a handler function or defineSkill({...})`,
      { data: { file: descriptor.handlerPath } },
    );
  }
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
    else if (importedOnLoad(descriptor)) await checkHandlerExport(descriptor);
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
 * (a plugin that would not load at start is caught before it), runtimes, and duplicate names.
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
  return { packages: validated.map((result) => result.entry), problems, ok: problems.length === 0 };
}

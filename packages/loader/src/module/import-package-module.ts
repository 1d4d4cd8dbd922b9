import { dirname } from "node:path";
import { type DefinedSkill, type Interceptor, SkillboxError, type SkillHandler } from "@skillbox/core";
import { describeExport, missingModuleMessage, readHandlerExport } from "@skillbox/core/handler-module";
import { displayPath, type InterceptorPackage } from "../manifest/read-package.js";
import { type ImportFreshOptions, importFresh } from "./import-fresh.js";

/**
 * Imports a skill's handler module from `handlerPath`: what it may export is defined once for
 * every runtime (`readHandlerExport`: a handler function, or `defineSkill(...)`, whose schemas then
 * count). `options.root` is the package's code root: its files are evaluated afresh (see
 * `importFresh`).
 */
export async function importSkillModule(
  handlerPath: string,
  options: ImportFreshOptions = {},
): Promise<{ handler: SkillHandler; defined?: DefinedSkill }> {
  const exported = await importHandlerModule(handlerPath, options);
  const read = readHandlerExport(exported, displayPath(handlerPath));
  if (read.refusal !== undefined) {
    throw new SkillboxError("HANDLER_INVALID", read.refusal, { data: { file: handlerPath } });
  }
  return read.definition === undefined
    ? { handler: read.handler }
    : { handler: read.handler, defined: read.definition };
}

/**
 * Imports an interceptor plugin: `defineInterceptor(...)`, or a factory called with the manifest's
 * `options`. The manifest's name, order and match win over the module's.
 */
export async function importInterceptorModule(descriptor: InterceptorPackage): Promise<Interceptor> {
  const exported = await importHandlerModule(descriptor.handlerPath, { root: descriptor.root });
  const { manifest } = descriptor;
  let value: unknown = exported;
  if (typeof exported === "function") {
    try {
      value = await (exported as (options: Record<string, unknown>) => unknown)(manifest.options ?? {});
    } catch (error) {
      throw new SkillboxError(
        "HANDLER_INVALID",
        `${displayPath(descriptor.handlerPath)}: the interceptor factory threw with the options of ${displayPath(descriptor.manifestFile)}: ${(error as Error).message}`,
        { cause: error, data: { file: descriptor.manifestFile } },
      );
    }
  }
  if (typeof value !== "object" || value === null) {
    throw new SkillboxError(
      "HANDLER_INVALID",
      `${displayPath(descriptor.handlerPath)}: the default export must be defineInterceptor({...}) or a factory returning one, got ${describeExport(value)}`,
      { data: { file: descriptor.handlerPath } },
    );
  }
  const interceptor = value as Interceptor;
  return {
    ...interceptor,
    name: manifest.name,
    ...(manifest.order !== undefined ? { order: manifest.order } : {}),
    ...(manifest.match !== undefined ? { match: manifest.match } : {}),
  };
}

/** Imports a module afresh; a load failure becomes `HANDLER_INVALID` naming the file. */
async function importHandlerModule(path: string, options: ImportFreshOptions): Promise<unknown> {
  try {
    return await importFresh(path, options);
  } catch (error) {
    throw loadFailure(path, error, options.root);
  }
}

/**
 * The `HANDLER_INVALID` for a module at `path` that failed to load: a package it (or a file it
 * imports) needs that is not installed for it is named with the fix, the way worker threads and
 * sandboxes name it (`missingModuleMessage`); anything else is quoted. `root` is the package's
 * code root (default: the module's folder).
 */
function loadFailure(path: string, error: unknown, root = dirname(path)): SkillboxError {
  const missing = missingModuleMessage(error, { root, display: displayPath });
  return new SkillboxError(
    "HANDLER_INVALID",
    missing ?? `${displayPath(path)}: failed to load: ${(error as Error).message}`,
    { cause: error, data: { file: path } },
  );
}

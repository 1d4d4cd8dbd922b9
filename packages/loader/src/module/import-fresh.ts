import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import * as hostCore from "@skillbox/core";
import * as hostCoreHandler from "@skillbox/core/handler";
import { HoistedImportGuard } from "@skillbox/core/handler-module";
import { listPackageFiles } from "./hash-package-files.js";
import { type JitiHooks, jitiInternals } from "./jiti-internals.js";

/** Options of {@link importFresh}. */
export interface ImportFreshOptions {
  /**
   * The folder whose files are evaluated afresh (default: the module's folder): the package's
   * code root, so that an edit to any file its hash covers — `.mjs`, `.cjs` and JSON included —
   * reaches the next import. Modules outside it (`node_modules`, Node's built-ins) load natively
   * and stay cached, as they do not hot-reload.
   */
  root?: string;
}

// jiti imports `.mjs`, `.cjs` and the `.js` of `"type": "module"` packages with Node's own
// `import()`/`require()` whatever `tryNative` says, and Node caches those modules for the life
// of the process: an edit to them never ran, and every version would stay in memory. jiti's
// public entry gives no way out, so this builds the instance the way that entry does
// (`jiti/lib/jiti.mjs`, see `jitiInternals`), with native loading refused for the package's own
// files: jiti then falls back to transpiling them, into objects the garbage collector reclaims
// once the previous version is no longer referenced. The import-fresh tests fail if a jiti
// upgrade changes this.

/**
 * What every module this loader imports gets for `@skillbox/core` and `@skillbox/core/handler`:
 * the very modules the host runs, whatever the package's folder and whatever (if anything) it
 * installed — the way Vite provides its client. So `defineSkill`, `SkillboxError`, `deny()` and
 * the interceptor helpers a handler uses are the host's own (one instance, the host's version), a
 * skill package declares `@skillbox/core` as a peer dependency only, and a project that installed
 * just the CLI (pnpm's strict layout) runs skills that import it. Exact specifiers: any other
 * subpath resolves from the package as usual.
 */
const HOST_MODULES: Record<string, unknown> = {
  "@skillbox/core": hostCore,
  "@skillbox/core/handler": hostCoreHandler,
};

/** Files jiti can evaluate itself (anything else, a `.node` addon say, loads natively). */
const TRANSPILABLE = /\.(?:[cm]?[jt]sx?|json)$/;

/** Marks the refusal jiti recovers from by transpiling; never seen outside this file. */
const EVALUATE_FRESH = "skillbox: evaluate this package file afresh";

function realPathOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Imports a module (TypeScript or JavaScript, ESM or CJS) with jiti, evaluating it and every
 * file of its package it imports from source again — so after an edit the new code runs,
 * including edited helpers and JSON. Native `import()` would cache forever (stale code, and one
 * copy kept per reload); jiti without a module cache evaluates into objects the garbage
 * collector can reclaim once the previous version is no longer referenced. `@skillbox/core` is
 * the host's (see `HOST_MODULES`); every other import resolves from the module's own folder.
 *
 * Returns the default export when there is one, else the module namespace.
 */
export async function importFresh(path: string, options: ImportFreshOptions = {}): Promise<unknown> {
  const root = options.root ?? dirname(path);
  // The files the package's hash covers, by real path (jiti resolves through symlinks).
  const packageFiles = new Set<string>([realPathOf(path) ?? path]);
  for (const file of listPackageFiles(root)) {
    const real = realPathOf(file);
    if (real !== undefined) packageFiles.add(real);
  }
  const fileOf = (id: string | URL): string | undefined => {
    const text = typeof id === "string" ? id : id.href;
    return text.startsWith("file:") ? fileURLToPath(text) : isAbsolute(text) ? text : undefined;
  };
  const isPackageFile = (id: string | URL): string | undefined => {
    const file = fileOf(id);
    const real = file === undefined ? undefined : realPathOf(file);
    return real !== undefined && packageFiles.has(real) && TRANSPILABLE.test(real) ? real : undefined;
  };
  // Only the package's own files go through jiti, so what loads natively from here on is what
  // they import directly: each such package must be one the skill may see (see the guard).
  const guard = new HoistedImportGuard(root, path);
  const refusalOf = (id: string | URL): Error | undefined => {
    const file = fileOf(id);
    return file === undefined ? undefined : guard.refusalOf(file);
  };
  const hooks: JitiHooks = {
    onError(error) {
      throw error;
    },
    nativeImport(id) {
      if (isPackageFile(id) !== undefined) return Promise.reject(new Error(EVALUATE_FRESH));
      const refusal = refusalOf(id);
      if (refusal !== undefined) return Promise.reject(refusal);
      return import(typeof id === "string" ? id : id.href);
    },
    createRequire(filename) {
      const native = createRequire(filename);
      const fresh = ((id: string) => {
        const file = isPackageFile(id);
        if (file !== undefined) {
          // JSON has no fallback in jiti: read it again instead of from the cache.
          if (file.endsWith(".json")) delete native.cache[file];
          else throw new Error(EVALUATE_FRESH);
        }
        const refusal = refusalOf(id);
        if (refusal !== undefined) throw refusal;
        return native(id);
      }) as NodeJS.Require;
      return Object.assign(fresh, {
        resolve: native.resolve,
        cache: native.cache,
        main: native.main,
        extensions: native.extensions,
      });
    },
  };
  // No transform cache on disk either: every reload's source is new (the cache would only grow,
  // one file per version, in the temp folder) and writing it costs more than it saves here.
  const { createJitiWithHooks, transform } = jitiInternals();
  const jiti = createJitiWithHooks(
    path,
    {
      moduleCache: false,
      fsCache: false,
      tryNative: false,
      interopDefault: true,
      // jiti answers a refused native load by transpiling the file itself: the refusal of an
      // undeclared package is raised there, before any of its code is evaluated.
      transform: (transformOptions) => {
        const refusal =
          transformOptions.filename === undefined ? undefined : refusalOf(transformOptions.filename);
        if (refusal !== undefined) throw refusal;
        return transform(transformOptions);
      },
      virtualModules: HOST_MODULES,
    },
    hooks,
  );
  const namespace = (await jiti.import(path)) as Record<string, unknown> | undefined;
  return namespace !== null && typeof namespace === "object" && "default" in namespace
    ? namespace.default
    : namespace;
}

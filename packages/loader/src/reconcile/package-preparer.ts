import { realpathSync } from "node:fs";
import { join, relative } from "node:path";
import type { SkillRegistration, SkillRegistry } from "@skillbox/core";
import { declaredInterceptorOf } from "../interceptors/declared-interceptor.js";
import { failClosedInterceptor } from "../interceptors/fail-closed-interceptor.js";
import { keepOperatorToggle } from "../manifest/keep-operator-toggle.js";
import { readPackage, type SkillPackage } from "../manifest/read-package.js";
import { needsModuleForSchemas } from "../manifest/skill-schemas.js";
import { type RegistrationContext, toRegistration } from "../manifest/to-registration.js";
import { checkSyntax } from "../module/check-syntax.js";
import { hashPackageFiles, type SkippedPackagePath } from "../module/hash-package-files.js";
import { importInterceptorModule, importSkillModule } from "../module/import-package-module.js";
import { snapshotPackage } from "../module/snapshot-package.js";
import type { PackagePaths } from "../package-paths.js";
import { failure, forEachLimited, type PreparedPackage } from "../package-state.js";

/** What preparing packages needs from its loader. */
export interface PackagePreparerOptions {
  paths: PackagePaths;
  registry: SkillRegistry;
  owner: string;
  /** Where a package was found: its watched folder, or `npm:<project>`. */
  originOf: (root: string) => string;
  /** Told what a walk of a code root left out (loops, limits). */
  onSkipped: (codeRoot: string, skipped: SkippedPackagePath[]) => void;
}

/** How many folders are read and imported at once. */
const CONCURRENCY = 32;

/**
 * The first step of a reconciliation: reads each folder, hashes its code root once per run (a
 * bundle's members share one hash), imports what has to be imported, snapshots what runs off the
 * host, and says what the folder holds now (see `PreparedPackage`). Never throws: a folder that
 * fails is `failed`, and the plan keeps its last good version.
 */
export class PackagePreparer {
  private readonly options: PackagePreparerOptions;

  constructor(options: PackagePreparerOptions) {
    this.options = options;
  }

  /**
   * Prepares `roots`, sorted by path. `eager` (a reload) imports every handler that runs on the
   * host and syntax-checks the others, so a broken edit is caught before it replaces the last
   * good version; otherwise (a start) handlers are imported on first use.
   */
  async prepareAll(roots: readonly string[], eager: boolean): Promise<PreparedPackage[]> {
    const prepared: PreparedPackage[] = [];
    const codeHashes = new Map<string, Promise<string>>();
    await forEachLimited(roots, CONCURRENCY, async (root) => {
      try {
        prepared.push(await this.prepare(root, eager, codeHashes));
      } catch (error) {
        prepared.push({ kind: "failed", root, failure: failure(root, error) });
      }
    });
    // Folders are sorted, so which of two duplicates wins does not depend on disk order.
    return prepared.sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : 0));
  }

  private async prepare(
    root: string,
    eager: boolean,
    codeHashes: Map<string, Promise<string>>,
  ): Promise<PreparedPackage> {
    const { paths } = this.options;
    // Whether the folder is still a bundle member cannot be told while the bundle's package.json
    // does not parse: the member keeps its last good version, as for any broken manifest.
    // Syncing the bundle itself reports the error; fixing it syncs every member again.
    if (paths.isInUnreadableBundle(root)) return { kind: "kept", root };
    let descriptor: Awaited<ReturnType<typeof readPackage>>;
    try {
      descriptor = await readPackage(root);
    } catch (error) {
      // An interceptor plugin guards even when its manifest is malformed: it fails closed.
      const declared = declaredInterceptorOf(root);
      if (declared === undefined) throw error;
      return {
        kind: "stand-in",
        root,
        descriptor: declared,
        interceptor: failClosedInterceptor(declared),
        failure: failure(root, error),
      };
    }
    if (descriptor === undefined) return { kind: "absent", root };
    if (descriptor.kind === "interceptor") {
      try {
        return {
          kind: "interceptor",
          root,
          descriptor,
          interceptor: await importInterceptorModule(descriptor),
        };
      } catch (error) {
        // A module that does not import, or a factory that refuses its options, guards nothing:
        // a stand-in refuses what the plugin would guard until it loads.
        return {
          kind: "stand-in",
          root,
          descriptor,
          interceptor: failClosedInterceptor(descriptor),
          failure: failure(root, error),
        };
      }
    }
    const codeRoot = paths.codeRootOf(root);
    const codeHash = await this.codeHashOf(codeRoot, codeHashes);
    // Code of worker and container skills never runs on the host: on reload it is only
    // syntax-checked. Without schemas in the manifest they come from defineSkill in the module,
    // which then has to be imported here once. Whenever the module is imported, its defineSkill
    // schemas are checked against the manifest's (`resolveSkillSchemas`).
    const runsOnHost = (descriptor.manifest.runtime ?? "inline") === "inline";
    const forSchemas = needsModuleForSchemas(descriptor);
    if (eager && !runsOnHost && !forSchemas) await checkSyntax(descriptor.handlerPath);
    const module =
      (eager && runsOnHost) || forSchemas
        ? await importSkillModule(descriptor.handlerPath, { root: codeRoot })
        : undefined;
    // Watched packages that run off the host are served from a snapshot of this version.
    const loadPath =
      !runsOnHost && paths.watchedFolderOf(root) !== undefined
        ? join(snapshotPackage(codeRoot, codeHash), relative(realpathSync(codeRoot), descriptor.handlerPath))
        : undefined;
    return {
      kind: "skill",
      root,
      descriptor,
      registration: this.registrationOf(descriptor, {
        codeHash,
        // A start and a reload register the same schemas: defineSkill's count only where the
        // manifest declares none, and must agree with it elsewhere (see resolveSkillSchemas).
        defined: module?.defined,
        owner: this.options.owner,
        origin: this.options.originOf(descriptor.root),
        codeRoot,
        ...(loadPath === undefined ? {} : { loadPath }),
      }),
      handler: module?.handler,
    };
  }

  /** The hash of a code root, computed once per run however many members share it. */
  private codeHashOf(codeRoot: string, codeHashes: Map<string, Promise<string>>): Promise<string> {
    let hashing = codeHashes.get(codeRoot);
    if (hashing === undefined) {
      const skipped: SkippedPackagePath[] = [];
      hashing = hashPackageFiles(codeRoot, { onSkipped: (entry) => skipped.push(entry) });
      codeHashes.set(codeRoot, hashing);
      this.options.onSkipped(codeRoot, skipped);
    }
    return hashing;
  }

  /** The package's registration, with an operator's enable/disable kept (see `keepOperatorToggle`). */
  private registrationOf(descriptor: SkillPackage, context: RegistrationContext): SkillRegistration {
    return keepOperatorToggle(this.options.registry, toRegistration(descriptor, context));
  }
}

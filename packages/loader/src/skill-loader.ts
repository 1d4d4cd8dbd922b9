import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import {
  type Skill,
  type SkillExecutor,
  type SkillHandler,
  type SkillRegistry,
  skillExecutor,
  skillRegistry,
} from "@skillbox/core";
import { discoverNpmPackages, listPackageFolders } from "./discovery/discover-package-roots.js";
import { declaredInterceptorOf } from "./interceptors/declared-interceptor.js";
import { loaderMetrics, type PackageKind } from "./loader-metrics.js";
import type {
  FailedPackage,
  LoadedPackage,
  LoadReport,
  LoadWarning,
  SkillLoaderEvents,
} from "./loader-types.js";
import { loaderBookkeepingOf } from "./manifest/loader-bookkeeping.js";
import { displayPath } from "./manifest/read-package.js";
import { resolveSkillSchemas } from "./manifest/skill-schemas.js";
import { ForeignHandlers } from "./module/foreign-handlers.js";
import type { SkippedPackagePath } from "./module/hash-package-files.js";
import { importSkillModule } from "./module/import-package-module.js";
import { PackagePaths } from "./package-paths.js";
import {
  describe,
  failure,
  forEachLimited,
  identityOf,
  isProviding,
  type PackageState,
  type PreparedPackage,
  type RegisteredSkillState,
} from "./package-state.js";
import { PackagePreparer } from "./reconcile/package-preparer.js";
import { type AppliedPlan, PlanApplier } from "./reconcile/plan-applier.js";
import { planReconcile, type RegisteredRow } from "./reconcile/plan-reconcile.js";
import { serveOrigins } from "./served-origins.js";
import { SkippedPathWarnings } from "./skipped-path-warnings.js";

/**
 * The open loaders of each executor. Every loader adds a handler resolver, and the executor asks
 * them in the order they were added: a loader asked for a version of a skill it did not load lets
 * the loader that did answer, instead of answering with the module of an older version.
 */
const openLoaders = new WeakMap<SkillExecutor, Set<SkillLoader>>();

/** Options shared by `loadSkills` and `watchSkills`. */
export interface SkillLoaderOptions {
  /** Folders whose subfolders (and `@scope/name` subfolders) are packages. Default `["./plugins"]`. */
  dirs?: string[];
  /** Discover installed npm packages with a `"skillbox"` field (default true). */
  npm?: boolean;
  /** Where `node_modules` is looked for (default: the working directory). */
  projectRoot?: string;
  /** Owner of the loaded skills (default `system`: global). */
  owner?: string;
  /** Defaults to the `skillRegistry` of `@skillbox/core`. */
  registry?: SkillRegistry;
  /** Defaults to the `skillExecutor` of `@skillbox/core`. */
  executor?: SkillExecutor;
}

/**
 * Loads skill and interceptor packages into a registry and an executor, keeps them in sync
 * with the disk, and serves their handlers. Handlers are imported lazily on first execution
 * at start-up (so a thousand packages start fast) and eagerly on reload (so a broken edit is
 * caught before it replaces the last good version).
 *
 * A full load (`loadAll`) and a sync of changed folders (`syncPackage`) are one reconciliation:
 * prepare the folders (read, hash once, import, snapshot), plan (`planReconcile`, pure), apply.
 */
export class SkillLoader extends EventEmitter<SkillLoaderEvents> {
  readonly registry: SkillRegistry;
  readonly executor: SkillExecutor;
  readonly dirs: string[];
  /** What a path belongs to (watched folder, package folder, bundle, code root). */
  readonly paths: PackagePaths;
  private readonly owner: string;
  private readonly npm: boolean;
  private readonly projectRoot: string;
  private readonly packages = new Map<string, PackageState>();
  /** Folders refused as duplicates, with the identity they wanted: they get it when it frees up. */
  private readonly refused = new Map<string, string>();
  /** Package folders found through npm discovery (their origin is the project, not a folder). */
  private readonly npmRoots = new Set<string>();
  /** Handlers of loader-managed skills registered by other processes, by handler reference. */
  private readonly foreignHandlers = new ForeignHandlers();
  /** What walks of code roots left out (loops, limits), to name each once. */
  private readonly skippedPaths = new SkippedPathWarnings();
  private readonly preparer: PackagePreparer;
  private readonly applier: PlanApplier;
  /** The warnings of the full load in progress. */
  private loadWarnings: LoadWarning[] | undefined;
  /** Whether a sync's plan is being applied: what it announces is a hot reload (`skillbox.reloads`). */
  private applyingSync = false;
  private readonly removeResolver: () => void;

  constructor(options: SkillLoaderOptions = {}) {
    super();
    this.registry = options.registry ?? skillRegistry;
    this.executor = options.executor ?? skillExecutor;
    this.dirs = (options.dirs ?? ["./plugins"]).map((directory) => resolve(directory));
    this.paths = new PackagePaths(this.dirs);
    this.owner = options.owner ?? "system";
    this.npm = options.npm ?? true;
    this.projectRoot = resolve(options.projectRoot ?? process.cwd());
    this.preparer = new PackagePreparer({
      paths: this.paths,
      registry: this.registry,
      owner: this.owner,
      originOf: (root) => this.originOf(root),
      onSkipped: (codeRoot, skipped) => this.warnSkipped(codeRoot, skipped),
    });
    this.applier = new PlanApplier({
      registry: this.registry,
      executor: this.executor,
      owner: this.owner,
      packages: this.packages,
      refused: this.refused,
      announce: (event, entry) => {
        if (this.applyingSync) loaderMetrics.reload(event, entry.kind);
        if (event === "removed") this.emit("removed", entry);
        else if (event === "loaded") this.emit("loaded", entry);
        else this.emit("reloaded", entry);
      },
    });
    this.removeResolver = this.executor.addHandlerResolver((skill) => this.resolveHandler(skill));
    const peers = openLoaders.get(this.executor) ?? new Set<SkillLoader>();
    peers.add(this);
    openLoaders.set(this.executor, peers);
  }

  /** Discovers every package, syncs the registry (adding, updating, removing) and the interceptors. */
  async loadAll(): Promise<LoadReport> {
    // From here on this process serves, of the loader-managed skills, only those its loaders'
    // folders provide: an earlier run's or another process's folders are not served here.
    serveOrigins(this.registry, this.owner, this.managedOrigins());
    const missingFolders = this.missingFolders();
    const report: LoadReport = { loaded: [], failed: [], removed: [], warnings: [...missingFolders] };
    this.loadWarnings = report.warnings;
    try {
      const roots = await this.discover();
      // A folder that does not exist is most often a typo or the wrong working directory: say so
      // as it happens too, not only in the report. After an await, so that the listeners of a
      // watcher created in the same tick hear it.
      for (const warning of missingFolders) this.emit("warning", warning);
      const prepared = await this.preparer.prepareAll(roots, false);
      // Known folders the discovery did not find go, except members of a bundle that cannot be
      // read now (they keep their last good version, as a package with a broken manifest does).
      const found = new Set(roots);
      const failedRoots = new Set(
        prepared.filter((entry) => entry.kind === "failed").map((entry) => entry.root),
      );
      for (const [root, state] of this.packages) {
        if (found.has(root)) continue;
        const codeRoot = state.kind === "skill" ? state.registration.code?.root : undefined;
        const kept =
          this.paths.isInUnreadableBundle(root) || (codeRoot !== undefined && failedRoots.has(codeRoot));
        prepared.push({ kind: kept ? "kept" : "absent", root });
      }
      const outcome = this.applier.apply(
        planReconcile({
          mode: "load",
          prepared: prepared.sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : 0)),
          known: this.packages,
          refused: this.refused,
          goneManifests: new Set(),
          rows: this.registeredRows(),
        }),
      );
      report.failed = outcome.failed;
      report.removed = outcome.removed;
      for (const state of this.packages.values()) {
        if (state.state === "registered" || state.state === "active") report.loaded.push(describe(state));
      }
      for (const failed of report.failed) this.emitError(failed);
      return report;
    } finally {
      this.loadWarnings = undefined;
    }
  }

  /**
   * Brings a package folder in line with the disk: loads a new package, reloads a changed one
   * (importing it first: a broken edit leaves the last good version serving and emits `error`),
   * or removes one whose folder or manifest is gone. For a bundle folder, every member too (they
   * share its code): the bundle is hashed once for all of them.
   */
  async syncPackage(root: string): Promise<void> {
    const roots = this.paths.foldersToSync(root, this.packages.keys());
    const prepared = await this.preparer.prepareAll(roots, true);
    const plan = planReconcile({
      mode: "sync",
      prepared,
      known: this.packages,
      refused: this.refused,
      goneManifests: this.goneManifestsFor(prepared),
      rows: [],
    });
    // Applying is synchronous: everything announced until the flag drops is this sync's.
    this.applyingSync = true;
    let outcome: AppliedPlan;
    try {
      outcome = this.applier.apply(plan, (failed) => {
        const kind = this.kindOf(failed.root);
        loaderMetrics.reload("failed", kind);
        this.emitError(failed, kind);
      });
    } finally {
      this.applyingSync = false;
    }
    for (const promoted of outcome.promote) await this.syncPackage(promoted);
  }

  /**
   * Known folders outside the run that hold an identity a folder of the run offers, and whose
   * manifest is gone (a folder being renamed, its unlink not yet seen): the new folder takes over.
   */
  private goneManifestsFor(prepared: readonly PreparedPackage[]): Set<string> {
    const offered = new Set(prepared.filter(isProviding).map(identityOf));
    const inRun = new Set(prepared.map((entry) => entry.root));
    const gone = new Set<string>();
    for (const [root, state] of this.packages) {
      if (inRun.has(root) || !offered.has(identityOf(state))) continue;
      if (!existsSync(state.descriptor.manifestFile)) gone.add(root);
    }
    return gone;
  }

  /** The loader's rows in the registry: this owner's, registered through the origins it manages. */
  private registeredRows(): RegisteredRow[] {
    const managed = this.managedOrigins();
    const rows: RegisteredRow[] = [];
    for (const skill of this.registry.list(this.owner)) {
      const bookkeeping = loaderBookkeepingOf(skill);
      if (bookkeeping?.root === undefined || skill.apiKeyId !== this.owner) continue;
      if (bookkeeping.origin === undefined || !managed.has(bookkeeping.origin)) continue;
      rows.push({
        skillId: skill.id,
        name: skill.name,
        version: skill.version,
        root: bookkeeping.root,
        codeRoot: skill.code?.root,
      });
    }
    return rows;
  }

  /**
   * Imports the handlers start-up skipped, a few at a time. A watcher runs this in the
   * background: a handler that is in memory can keep serving when a later edit breaks its file.
   */
  async warmUp(concurrency = 4): Promise<void> {
    const cold = [...this.packages.values()].filter(
      (state): state is RegisteredSkillState =>
        state.kind === "skill" &&
        state.state === "registered" &&
        state.skill.runtime === "inline" &&
        !state.handler.loaded,
    );
    await forEachLimited(cold, concurrency, async (state) => {
      if (state.handler.loaded) return;
      await Promise.resolve(this.resolveHandler(state.skill)).catch(() => {
        // Reported when the skill runs; a warm-up never fails.
      });
    });
  }

  /** Packages currently known, with their state. */
  list(): LoadedPackage[] {
    return [...this.packages.values()].map(describe);
  }

  /** Stops serving handlers; leaves the registry as it is (a restart syncs it). */
  close(): void {
    this.removeResolver();
    openLoaders.get(this.executor)?.delete(this);
  }

  /** A warning for each configured folder that does not exist (it then provides nothing). */
  private missingFolders(): LoadWarning[] {
    return this.dirs
      .filter((directory) => !existsSync(directory))
      .map((folder) => ({
        code: "FOLDER_NOT_FOUND" as const,
        folder,
        message: `${displayPath(folder)}: no such folder; it provides no skills (create it, or configure the folders that hold your packages)`,
      }));
  }

  /**
   * Names each loop or limit a walk of `codeRoot` left out, once while it lasts: in the report of
   * the full load in progress, and as a `warning` event.
   */
  private warnSkipped(codeRoot: string, skipped: SkippedPackagePath[]): void {
    for (const warning of this.skippedPaths.fresh(codeRoot, skipped)) {
      this.loadWarnings?.push(warning);
      if (this.listenerCount("warning") > 0) this.emit("warning", warning);
    }
  }

  private async discover(): Promise<string[]> {
    const fromDirs = (await Promise.all(this.dirs.map((directory) => listPackageFolders(directory)))).flat();
    const fromNpm = this.npm ? await discoverNpmPackages(this.projectRoot) : [];
    for (const root of fromNpm) this.npmRoots.add(root);
    return [...new Set([...fromDirs, ...fromNpm])];
  }

  /**
   * Where a package was found: its watched folder, or this project's npm packages. Stored with
   * each skill, so that a later load removes only what this configuration would have found.
   */
  private originOf(root: string): string {
    return this.paths.watchedFolderOf(root) ?? (this.npmRoots.has(root) ? `npm:${this.projectRoot}` : root);
  }

  /** The origins this loader is responsible for. */
  private managedOrigins(): Set<string> {
    return new Set([...this.dirs, ...(this.npm ? [`npm:${this.projectRoot}`] : [])]);
  }

  /**
   * This loader's state of `skill` when it registered this very version: same entry and same
   * code hash. A handler answers only for the code it was imported from.
   */
  private loadedVersionOf(skill: Skill): RegisteredSkillState | undefined {
    const root = loaderBookkeepingOf(skill)?.root;
    const state = root === undefined ? undefined : this.packages.get(root);
    if (state?.kind !== "skill" || state.state !== "registered" || state.skill.id !== skill.id)
      return undefined;
    return skill.code?.codeHash === state.registration.code?.codeHash ? state : undefined;
  }

  /** The executor's handler resolver for loader-managed skills. */
  private resolveHandler(skill: Skill): SkillHandler | Promise<SkillHandler> | undefined {
    const bookkeeping = loaderBookkeepingOf(skill);
    if (bookkeeping === undefined || skill.code === undefined) return undefined;
    const state = this.loadedVersionOf(skill);
    if (state !== undefined) {
      const { descriptor } = state;
      return state.handler.get(async (refuse) => {
        const { handler, defined } = await importSkillModule(descriptor.handlerPath, {
          root: this.paths.codeRootOf(descriptor.root),
        });
        // Imported lazily, so compared now: a module whose defineSkill schemas disagree with
        // the manifest never runs, and every call names both places until the package changes.
        if (defined !== undefined) {
          try {
            resolveSkillSchemas(descriptor, defined);
          } catch (error) {
            this.emitError(failure(descriptor.root, error));
            refuse(error);
          }
        }
        return handler;
      });
    }
    // Another loader of this executor (a watcher over the same folders, say) loaded this version:
    // it answers, whichever resolver the executor asks first.
    for (const peer of openLoaders.get(this.executor) ?? []) {
      if (peer !== this && peer.loadedVersionOf(skill) !== undefined) return undefined;
    }
    // Registered by another process's loader (same database), or a version of a package this
    // loader saw before it changed on disk: load it from its path.
    const { modulePath, codeHash, root } = skill.code;
    return this.foreignHandlers.handlerOf(modulePath, codeHash, root);
  }

  /**
   * Whether the package in `root` is a skill or an interceptor plugin: as known, else as its
   * folder declares itself (read only for a package that failed before it was ever known).
   */
  private kindOf(root: string): PackageKind {
    return (
      this.packages.get(root)?.kind ?? (declaredInterceptorOf(root) === undefined ? "skill" : "interceptor")
    );
  }

  /** Reports `failed` (and counts it); `kind` when the caller already knows it, as a sync's failure does. */
  private emitError(failed: FailedPackage, kind: PackageKind = this.kindOf(failed.root)): void {
    loaderMetrics.loadError(kind, failed.code);
    // An `error` event without a listener would throw: a loader never takes its host down.
    if (this.listenerCount("error") > 0) this.emit("error", failed);
  }
}

import { EventEmitter } from "node:events";
import { existsSync, realpathSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import {
  type DefinedSkill,
  type Interceptor,
  type Skill,
  type SkillExecutor,
  type SkillHandler,
  type SkillRegistration,
  type SkillRegistry,
  skillExecutor,
  skillRegistry,
} from "@skillbox/core";
import {
  discoverNpmPackages,
  listPackageFolders,
  packageRootOf,
} from "./discovery/discover-package-roots.js";
import { codeRootOf, packageJsonKindOf } from "./discovery/skill-bundle.js";
import { declaredInterceptorOf } from "./interceptors/declared-interceptor.js";
import { failClosedInterceptor } from "./interceptors/fail-closed-interceptor.js";
import type {
  FailedPackage,
  LoadedPackage,
  LoadReport,
  LoadWarning,
  SkillLoaderEvents,
} from "./loader-types.js";
import { keepOperatorToggle } from "./manifest/keep-operator-toggle.js";
import {
  displayPath,
  type PackageDescriptor,
  readPackage,
  type SkillPackage,
} from "./manifest/read-package.js";
import { needsModuleForSchemas, resolveSkillSchemas } from "./manifest/skill-schemas.js";
import { LOADER_MARK, type RegistrationContext, toRegistration } from "./manifest/to-registration.js";
import { checkSyntax } from "./module/check-syntax.js";
import { ForeignHandlers } from "./module/foreign-handlers.js";
import { hashPackageFiles, type SkippedPackagePath } from "./module/hash-package-files.js";
import { importInterceptorModule, importSkillModule } from "./module/import-package-module.js";
import { snapshotPackage } from "./module/snapshot-package.js";
import {
  describe,
  failure,
  forEachLimited,
  identityOf,
  interceptorStateOf,
  isWorkingInterceptor,
  type PackageState,
  type PreparedPackage,
} from "./package-state.js";
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
 */
export class SkillLoader extends EventEmitter<SkillLoaderEvents> {
  readonly registry: SkillRegistry;
  readonly executor: SkillExecutor;
  readonly dirs: string[];
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
  /** The warnings of the full load in progress. */
  private loadWarnings: LoadWarning[] | undefined;
  private readonly removeResolver: () => void;

  constructor(options: SkillLoaderOptions = {}) {
    super();
    this.registry = options.registry ?? skillRegistry;
    this.executor = options.executor ?? skillExecutor;
    this.dirs = (options.dirs ?? ["./plugins"]).map((directory) => resolve(directory));
    this.owner = options.owner ?? "system";
    this.npm = options.npm ?? true;
    this.projectRoot = resolve(options.projectRoot ?? process.cwd());
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
    const roots = await this.discover();
    // A folder that does not exist is most often a typo or the wrong working directory: say so
    // as it happens too, not only in the report. After an await, so that the listeners of a
    // watcher created in the same tick hear it.
    for (const warning of missingFolders) this.emit("warning", warning);
    const prepared: PreparedPackage[] = [];
    // Every member of a bundle hashes the whole bundle: once per bundle is enough for one load.
    const codeHashes = new Map<string, Promise<string>>();
    await forEachLimited(roots, 32, async (root) => {
      try {
        const result = await this.prepare(root, false, codeHashes);
        if (result !== undefined) prepared.push(result);
      } catch (error) {
        report.failed.push(failure(root, error));
      }
    });
    // Folders are sorted, so which of two duplicates wins does not depend on disk order.
    prepared.sort((a, b) => a.descriptor.root.localeCompare(b.descriptor.root));
    const claimed = new Map<string, string>();
    const accepted = prepared.filter((entry) => {
      const clash = this.duplicateOf(entry, claimed);
      if (clash !== undefined) report.failed.push(clash);
      return clash === undefined;
    });
    this.registerAll(
      accepted.filter((entry) => entry.registration !== undefined),
      report,
    );
    for (const entry of accepted.filter((candidate) => candidate.interceptor !== undefined)) {
      const previous = this.packages.get(entry.descriptor.root);
      if (entry.failure !== undefined) {
        report.failed.push(entry.failure);
        // A plugin that loaded before keeps its last good version, as a skill does.
        if (isWorkingInterceptor(previous)) continue;
      }
      this.activateInterceptor(interceptorStateOf(entry), entry.interceptor!, previous);
    }
    const found = new Set(roots);
    const vanishedInterceptors: LoadedPackage[] = [];
    for (const [root, state] of [...this.packages]) {
      if (found.has(root)) continue;
      // Skills are found missing from the registry below; interceptors live only here.
      this.packages.delete(root);
      if (state.interceptor !== undefined) {
        this.executor.removeInterceptor(state.interceptor.name);
        vanishedInterceptors.push(describe(state));
      }
    }
    for (const entry of vanishedInterceptors) this.emit("removed", entry);
    for (const root of this.refused.keys()) if (!found.has(root)) this.refused.delete(root);
    const unreadable = new Set(report.failed.map((failed) => failed.root));
    report.removed = [...this.removeVanished(found, unreadable), ...vanishedInterceptors];
    for (const failed of this.recheckRequirements()) report.failed.push(failed);
    for (const state of this.packages.values()) {
      if (state.unmet === undefined && state.unavailable === undefined) report.loaded.push(describe(state));
    }
    for (const failed of report.failed) this.emitError(failed);
    this.loadWarnings = undefined;
    return report;
  }

  /**
   * A second folder offering the same skill name@version or interceptor name would replace the
   * first (the registry and the executor key by those): it is refused instead, naming both.
   * `claimed` maps identities to the folder that has them.
   */
  private duplicateOf(entry: PreparedPackage, claimed: Map<string, string>): FailedPackage | undefined {
    const key = identityOf(entry);
    const holder = claimed.get(key);
    if (holder === undefined || holder === entry.descriptor.root) {
      claimed.set(key, entry.descriptor.root);
      this.refused.delete(entry.descriptor.root);
      return undefined;
    }
    this.refused.set(entry.descriptor.root, key);
    return {
      root: entry.descriptor.root,
      file: entry.descriptor.manifestFile,
      code: "MANIFEST_INVALID",
      message: `${displayPath(entry.descriptor.manifestFile)}: ${key} is already provided by ${displayPath(holder)}; rename it, change its \`version\`, or remove one of the folders`,
    };
  }

  /** Registers many skills in one transaction; if that fails, one by one so each failure is its own. */
  private registerAll(entries: PreparedPackage[], report: LoadReport): void {
    let stored: Skill[] | undefined;
    try {
      stored = this.registry.registerMany(entries.map((entry) => entry.registration!));
    } catch {
      stored = undefined;
    }
    entries.forEach((entry, index) => {
      try {
        const skill = stored?.[index] ?? this.registry.register(entry.registration!);
        this.packages.set(entry.descriptor.root, { ...entry, skill });
      } catch (error) {
        report.failed.push(failure(entry.descriptor.root, error));
      }
    });
  }

  /**
   * Brings one package folder in line with the disk: loads a new package, reloads a changed one
   * (importing it first: a broken edit leaves the last good version serving and emits `error`),
   * or removes one whose folder or manifest is gone.
   */
  async syncPackage(root: string): Promise<void> {
    // Whether the folder is still a bundle member cannot be told while the bundle's package.json
    // does not parse: the member keeps its last good version, as for any broken manifest. Syncing
    // the bundle itself reports the error; fixing it syncs every member again.
    if (this.inUnreadableBundle(root)) return;
    const previous = this.packages.get(root);
    let prepared: PreparedPackage | undefined;
    try {
      prepared = await this.prepare(root, true);
    } catch (error) {
      this.emitError(failure(root, error));
      return;
    }
    if (prepared === undefined) {
      this.refused.delete(root);
      if (previous !== undefined) {
        this.remove(root, previous);
        await this.promoteDuplicatesOf(identityOf(previous));
      }
      return;
    }
    if (prepared.failure !== undefined) {
      this.emitError(prepared.failure);
      // A plugin that loaded before keeps its last good version, as a skill does.
      if (isWorkingInterceptor(previous)) return;
    }
    if (this.refuseDuplicate(prepared)) return;
    if (previous !== undefined && previous.descriptor.kind !== prepared.descriptor.kind)
      this.remove(root, previous);
    const state: PackageState =
      prepared.registration !== undefined
        ? this.applySkill(prepared, previous)
        : this.activateInterceptor(interceptorStateOf(prepared), prepared.interceptor!, previous);
    this.packages.set(root, state);
    // Replacing a fail-closed stand-in is the plugin's first load, not a reload.
    const first = previous === undefined || previous.unavailable !== undefined;
    if (state.unmet === undefined && state.unavailable === undefined)
      this.emit(first ? "loaded" : "reloaded", describe(state));
    for (const failed of this.recheckRequirements()) this.emitError(failed);
  }

  /**
   * True (and an `error` emitted) when another known folder already provides this identity.
   * A holder whose manifest is gone (a folder being renamed, its unlink not yet seen) is
   * forgotten instead: the new folder takes the registry entry over.
   */
  private refuseDuplicate(prepared: PreparedPackage): boolean {
    const root = prepared.descriptor.root;
    const key = identityOf(prepared);
    for (const [otherRoot, state] of this.packages) {
      if (otherRoot === root || identityOf(state) !== key) continue;
      if (!existsSync(state.descriptor.manifestFile)) {
        this.packages.delete(otherRoot);
        continue;
      }
      const clash = this.duplicateOf(prepared, new Map([[key, otherRoot]]));
      if (clash !== undefined) this.emitError(clash);
      return clash !== undefined;
    }
    return false;
  }

  /**
   * Imports the handlers start-up skipped, a few at a time. A watcher runs this in the
   * background: a handler that is in memory can keep serving when a later edit breaks its file.
   */
  async warmUp(concurrency = 4): Promise<void> {
    const cold = [...this.packages.values()].filter(
      (state) =>
        state.descriptor.kind === "skill" && state.skill?.runtime === "inline" && state.handler === undefined,
    );
    await forEachLimited(cold, concurrency, async (state) => {
      if (state.skill === undefined || state.handler !== undefined) return;
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

  /** The folders of known packages that are `folder` or inside it (a bundle's members, say). */
  packageRootsWithin(folder: string): string[] {
    return [...this.packages.keys()].filter((root) => root === folder || root.startsWith(folder + sep));
  }

  /**
   * The top-level package folder of a path in a watched folder (`name/`, `@scope/name/`, or the
   * bundle for a path in one of its members); undefined for paths outside the watched folders.
   */
  topPackageFolderOf(path: string): string | undefined {
    const directory = this.watchedFolderOf(path);
    return directory === undefined ? undefined : packageRootOf(directory, path);
  }

  /** Whether `root` lies inside a top-level folder whose package.json does not parse. */
  private inUnreadableBundle(root: string): boolean {
    const top = this.topPackageFolderOf(root);
    return top !== undefined && top !== root && packageJsonKindOf(top) === "unreadable";
  }

  /**
   * The watched folder that contains `path` — the longest one, so `plugins` never claims
   * `plugins-extra/…` — or undefined when none does.
   */
  watchedFolderOf(path: string): string | undefined {
    let found: string | undefined;
    for (const directory of this.dirs) {
      if (path.startsWith(directory + sep) && directory.length > (found?.length ?? -1)) found = directory;
    }
    return found;
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
    return this.watchedFolderOf(root) ?? (this.npmRoots.has(root) ? `npm:${this.projectRoot}` : root);
  }

  /** The origins this loader is responsible for. */
  private managedOrigins(): Set<string> {
    return new Set([...this.dirs, ...(this.npm ? [`npm:${this.projectRoot}`] : [])]);
  }

  /** Reads (and, for interceptors or when `eager`, imports) one package. Undefined: not a package. */
  private async prepare(
    root: string,
    eager: boolean,
    codeHashes = new Map<string, Promise<string>>(),
  ): Promise<PreparedPackage | undefined> {
    let descriptor: PackageDescriptor | undefined;
    try {
      descriptor = await readPackage(root);
    } catch (error) {
      // An interceptor plugin guards even when its manifest is malformed: it fails closed.
      const declared = declaredInterceptorOf(root);
      if (declared === undefined) throw error;
      return {
        descriptor: declared,
        interceptor: failClosedInterceptor(declared),
        failure: failure(root, error),
      };
    }
    if (descriptor === undefined) return undefined;
    if (descriptor.kind === "interceptor") {
      try {
        return { descriptor, interceptor: await importInterceptorModule(descriptor) };
      } catch (error) {
        // A module that does not import, or a factory that refuses its options, guards nothing:
        // a stand-in refuses what the plugin would guard until it loads.
        return { descriptor, interceptor: failClosedInterceptor(descriptor), failure: failure(root, error) };
      }
    }
    const codeRoot = codeRootOf(root);
    let hashing = codeHashes.get(codeRoot);
    if (hashing === undefined) {
      const skipped: SkippedPackagePath[] = [];
      hashing = hashPackageFiles(codeRoot, { onSkipped: (entry) => skipped.push(entry) });
      codeHashes.set(codeRoot, hashing);
      this.warnSkipped(codeRoot, skipped);
    }
    const codeHash = await hashing;
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
      !runsOnHost && this.watchedFolderOf(root) !== undefined
        ? join(snapshotPackage(codeRoot, codeHash), relative(realpathSync(codeRoot), descriptor.handlerPath))
        : undefined;
    return {
      descriptor,
      registration: this.registrationOf(descriptor, {
        codeHash,
        // A start and a reload register the same schemas: defineSkill's count only where the
        // manifest declares none, and must agree with it elsewhere (see resolveSkillSchemas).
        defined: module?.defined,
        owner: this.owner,
        origin: this.originOf(descriptor.root),
        ...(loadPath === undefined ? {} : { loadPath }),
        ...(codeRoot === root ? {} : { codeRoot }),
      }),
      ...(module ? { handler: module.handler } : {}),
    };
  }

  /** The package's registration, with an operator's enable/disable kept (see `keepOperatorToggle`). */
  private registrationOf(descriptor: SkillPackage, context: RegistrationContext): SkillRegistration {
    return keepOperatorToggle(this.registry, toRegistration(descriptor, context));
  }

  private applySkill(prepared: PreparedPackage, previous: PackageState | undefined): PackageState {
    const registration = prepared.registration!;
    const skill = this.registry.register(registration);
    // The folder now holds another name or version: the old entry goes.
    if (previous?.skill !== undefined && previous.skill.id !== skill.id)
      this.registry.unregisterById(previous.skill.id);
    return { descriptor: prepared.descriptor, registration, skill, handler: prepared.handler };
  }

  private activateInterceptor(
    state: PackageState,
    interceptor: Interceptor,
    previous?: PackageState,
  ): PackageState {
    if (previous?.interceptor !== undefined && previous.interceptor.name !== interceptor.name) {
      this.executor.removeInterceptor(previous.interceptor.name);
    }
    const enabled = (state.descriptor.manifest as { enabled?: boolean }).enabled !== false;
    if (enabled) this.executor.use(interceptor);
    else this.executor.removeInterceptor(interceptor.name);
    const next = { ...state, interceptor };
    this.packages.set(state.descriptor.root, next);
    return next;
  }

  private remove(root: string, state: PackageState): void {
    this.packages.delete(root);
    if (state.skill !== undefined) this.registry.unregisterById(state.skill.id);
    if (state.interceptor !== undefined) this.executor.removeInterceptor(state.interceptor.name);
    this.emit("removed", describe(state));
    for (const failed of this.recheckRequirements()) this.emitError(failed);
  }

  /** Loads the folders that were refused because another one held `identity`, now that it is free. */
  private async promoteDuplicatesOf(identity: string): Promise<void> {
    for (const [root, wanted] of [...this.refused]) {
      if (wanted === identity) await this.syncPackage(root);
    }
  }

  /**
   * Unregisters loader-managed skills of this owner whose package folder was not found. Members
   * of a bundle that failed to read (its package.json does not parse) keep their last good
   * version, as a package with a broken manifest does.
   */
  private removeVanished(found: Set<string>, unreadable: Set<string>): LoadedPackage[] {
    const removed: LoadedPackage[] = [];
    for (const skill of this.registry.list(this.owner)) {
      const metadata = skill.metadata as
        | { loader?: string; root?: string; origin?: string; codeRoot?: string }
        | undefined;
      if (metadata?.loader !== LOADER_MARK || metadata.root === undefined || skill.apiKeyId !== this.owner)
        continue;
      const managed = metadata.origin !== undefined && this.managedOrigins().has(metadata.origin);
      if (!managed || found.has(metadata.root)) continue;
      if (metadata.codeRoot !== undefined && unreadable.has(metadata.codeRoot)) continue;
      this.registry.unregisterById(skill.id);
      removed.push({
        kind: "skill",
        name: skill.name,
        version: skill.version,
        root: metadata.root,
        skillId: skill.id,
      });
    }
    for (const entry of removed) this.emit("removed", entry);
    return removed;
  }

  /**
   * Registers packages whose requirements are now met and unregisters those whose are not,
   * until nothing changes (requirements may chain). Returns the packages left unmet.
   */
  private recheckRequirements(): FailedPackage[] {
    let changed = true;
    while (changed) {
      changed = false;
      for (const state of this.packages.values()) {
        const requires = state.registration?.requires;
        if (requires === undefined) continue;
        const unmet = Object.entries(requires)
          .filter(([name, range]) => this.registry.resolveVersion(name, range, this.owner) === null)
          .map(([name, range]) => `${name}@${range}`);
        if (unmet.length > 0 && state.unmet === undefined) {
          if (state.skill !== undefined) this.registry.unregisterById(state.skill.id);
          state.skill = undefined;
          state.unmet = unmet;
          changed = true;
        } else if (unmet.length === 0 && state.unmet !== undefined) {
          state.skill = this.registry.register(state.registration!);
          state.unmet = undefined;
          this.emit("loaded", describe(state));
          changed = true;
        } else if (unmet.length > 0) {
          state.unmet = unmet;
        }
      }
    }
    return [...this.packages.values()]
      .filter((state) => state.unmet !== undefined)
      .map((state) => ({
        root: state.descriptor.root,
        file: state.descriptor.manifestFile,
        code: "REQUIREMENTS_UNMET",
        message: `${displayPath(state.descriptor.manifestFile)}: \`requires\` names skills that are not registered: ${state.unmet!.join(", ")}; ${state.descriptor.manifest.name} is not callable until they are`,
      }));
  }

  /**
   * This loader's state of `skill` when it registered this very version: same entry and same
   * code hash. A handler answers only for the code it was imported from.
   */
  private loadedVersionOf(skill: Skill): PackageState | undefined {
    const metadata = skill.metadata as { root?: string; codeHash?: string } | undefined;
    const state = metadata?.root === undefined ? undefined : this.packages.get(metadata.root);
    if (state?.descriptor.kind !== "skill" || state.skill?.id !== skill.id) return undefined;
    const loadedHash = (state.registration?.metadata as { codeHash?: string } | undefined)?.codeHash;
    return (metadata?.codeHash ?? skill.contentHash) === (loadedHash ?? state.skill.contentHash)
      ? state
      : undefined;
  }

  /** The executor's handler resolver for loader-managed skills. */
  private resolveHandler(skill: Skill): SkillHandler | Promise<SkillHandler> | undefined {
    const metadata = skill.metadata as
      | { loader?: string; root?: string; handlerPath?: string; codeHash?: string; codeRoot?: string }
      | undefined;
    if (metadata?.loader !== LOADER_MARK || metadata.handlerPath === undefined) return undefined;
    const state = this.loadedVersionOf(skill);
    if (state !== undefined) {
      if (state.handler !== undefined) return state.handler;
      const { descriptor } = state;
      state.handlerLoading ??= importSkillModule(descriptor.handlerPath, {
        root: codeRootOf(descriptor.root),
      }).then(
        ({ handler, defined }) => {
          // Imported lazily, so compared now: a module whose defineSkill schemas disagree with
          // the manifest never runs, and every call names both places until the package changes.
          if (descriptor.kind === "skill" && defined !== undefined)
            this.checkSchemasAgree(descriptor, defined);
          state.handler = handler;
          state.handlerLoading = undefined;
          return handler;
        },
        (error: unknown) => {
          state.handlerLoading = undefined;
          throw error;
        },
      );
      return state.handlerLoading;
    }
    // Another loader of this executor (a watcher over the same folders, say) loaded this version:
    // it answers, whichever resolver the executor asks first.
    for (const peer of openLoaders.get(this.executor) ?? []) {
      if (peer !== this && peer.loadedVersionOf(skill) !== undefined) return undefined;
    }
    // Registered by another process's loader (same database), or a version of a package this
    // loader saw before it changed on disk: load it from its path.
    return this.foreignHandlers.handlerOf(
      metadata.handlerPath,
      metadata.codeHash ?? skill.contentHash,
      metadata.codeRoot ?? metadata.root,
    );
  }

  /** Throws (and reports) the `MANIFEST_INVALID` of a module whose schemas disagree with the manifest's. */
  private checkSchemasAgree(descriptor: SkillPackage, defined: DefinedSkill): void {
    try {
      resolveSkillSchemas(descriptor, defined);
    } catch (error) {
      this.emitError(failure(descriptor.root, error));
      throw error;
    }
  }

  private emitError(failed: FailedPackage): void {
    // An `error` event without a listener would throw: a loader never takes its host down.
    if (this.listenerCount("error") > 0) this.emit("error", failed);
  }
}

import { EventEmitter } from "node:events";
import type Database from "better-sqlite3";
import semver from "semver";
import { SkillboxError } from "../errors/skillbox-error.js";
import { formatZodIssues, type SkillRegistration, skillRegistrationSchema } from "../schemas.js";
import type { Skill } from "../types.js";
import { isVisibleTo, ownerPrecedence } from "./owner-scope.js";
import { parseSkillReference } from "./skill-reference.js";
import { type SkillDefinition, SkillStore } from "./skill-store.js";

/** Options of {@link SkillRegistry}. */
export interface SkillRegistryOptions {
  /** An open Skillbox database (see `openDatabase`). */
  database: Database.Database;
}

/** Why the registry's contents changed. */
export interface RegistryChange {
  /** `local` for writes through this instance, `external` for writes seen from another connection. */
  origin: "local" | "external";
  kind: "registered" | "unregistered" | "enabled" | "disabled" | "reloaded";
  skill?: Skill;
}

/** Options of {@link SkillRegistry.resolveVersion}. */
export interface ResolveOptions {
  /** Also consider disabled versions (default false). */
  includeDisabled?: boolean;
}

const MAX_RESOLUTION_CACHE_ENTRIES = 10_000;
/** No range resolves exactly as `latest` does, so both share a cache entry. */
const NO_RANGE = "latest";

/** The answers for one owner, name and range: enabled versions only, and disabled ones too. */
interface Resolution {
  enabled?: Skill | null;
  any?: Skill | null;
}
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The single source of truth for skill metadata: SQLite for durability, two in-memory
 * caches (all skills by id; versions per name) for lookups. Writes go to SQLite first and
 * invalidate the caches; writes by other processes are noticed on the next lookup in a later
 * task (I/O callback, timer, immediate) through a revision counter maintained by triggers,
 * with no TTL.
 *
 * Emits `change` ({@link RegistryChange}) after every change it sees.
 */
export class SkillRegistry extends EventEmitter<{ change: [RegistryChange] }> {
  readonly database: Database.Database;
  private readonly store: SkillStore;
  /** All skills by id. */
  private registeredSkills = new Map<string, Skill>();
  /** Versions per name, highest version first. */
  private versionCache = new Map<string, Skill[]>();
  /**
   * Answers of `resolveVersion` by owner, name and range. Nested maps, not one joined key: a
   * lookup then hashes strings it was given (whose hashes V8 caches) instead of building one.
   */
  private resolutionCache = new Map<string, Map<string, Map<string, Resolution>>>();
  private resolutionCacheEntries = 0;
  private loaded = false;
  /** The `skills_revision` this registry has accounted for (-1 before the first load). */
  private seenRevision = -1;
  /** A write through this registry found that someone else had changed `skills` first. */
  private externalChangePending = false;
  /** True from a freshness check until the current task's microtasks have run (see `ensureFresh`). */
  private checkedThisTask = false;
  private readonly endTask = () => {
    this.checkedThisTask = false;
  };
  /** Queued as a microtask: a tick queued from one runs once the whole microtask queue is empty. */
  private readonly endTaskAfterMicrotasks = () => {
    process.nextTick(this.endTask);
  };
  /** Skills any of these reject are not served by this instance (see `addServingFilter`). */
  private readonly servingFilters = new Set<(skill: Skill) => boolean>();

  constructor(options: SkillRegistryOptions) {
    super();
    this.database = options.database;
    this.store = new SkillStore(options.database);
  }

  /** Validates and stores a skill version; re-registering an identical definition writes nothing. */
  register(registration: SkillRegistration): Skill {
    return this.registerMany([registration])[0]!;
  }

  /** Registers several skills in one transaction (used by loaders for bulk sync). */
  registerMany(registrations: readonly SkillRegistration[]): Skill[] {
    const definitions = registrations.map(toDefinition);
    const results = this.write(() => definitions.map((definition) => this.store.upsert(definition)));
    const written = results.filter((result) => result.written);
    if (written.length > 0) {
      this.invalidateCache();
      for (const { skill } of written) this.emit("change", { origin: "local", kind: "registered", skill });
    }
    return results.map((result) => result.skill);
  }

  /**
   * Removes skills named `name`: one version, or all versions when `version` is omitted;
   * only those of `owner` when given. Returns how many were removed.
   */
  unregister(name: string, version?: string, owner?: string): number {
    const victims = this.all().filter(
      (skill) =>
        skill.name === name &&
        (version === undefined || skill.version === version) &&
        (owner === undefined || skill.apiKeyId === owner),
    );
    if (victims.length === 0) return 0;
    this.write(() => {
      for (const skill of victims) this.store.deleteById(skill.id);
    });
    this.invalidateCache();
    for (const skill of victims) this.emit("change", { origin: "local", kind: "unregistered", skill });
    return victims.length;
  }

  /** Removes one skill version by id. Returns false when no such id exists. */
  unregisterById(id: string): boolean {
    const skill = this.store.findById(id);
    if (skill === undefined) return false;
    this.write(() => this.store.deleteById(id));
    this.invalidateCache();
    this.emit("change", { origin: "local", kind: "unregistered", skill });
    return true;
  }

  /** Enables or disables a skill version without deleting it. Returns the updated skill, or null. */
  setEnabledById(id: string, enabled: boolean): Skill | null {
    const changed = this.write(() => this.store.setEnabled(id, enabled));
    if (!changed) return null;
    this.invalidateCache();
    const skill = this.getSkill(id) ?? null;
    if (skill) this.emit("change", { origin: "local", kind: enabled ? "enabled" : "disabled", skill });
    return skill;
  }

  /**
   * Every skill visible to `owner` (all skills of all owners when omitted), by name, highest
   * version first; the owner's own `name@version` replaces a global one.
   */
  list(owner?: string): Skill[] {
    const skills =
      owner === undefined
        ? this.all()
        : [...new Set(this.all().map((skill) => skill.name))].flatMap((name) =>
            this.getSkillVersions(name, owner),
          );
    return skills.sort((a, b) => a.name.localeCompare(b.name) || semver.rcompare(a.version, b.version));
  }

  /**
   * Looks a skill up by id, by `name@range` or by `name` (highest stable version).
   * Disabled skills are returned too; `execute` is what refuses them.
   */
  getSkill(idOrReference: string, owner?: string): Skill | undefined {
    this.ensureFresh();
    if (UUID_PATTERN.test(idOrReference)) {
      const skill = this.registeredSkills.get(idOrReference);
      return skill && isVisibleTo(skill.apiKeyId, owner) ? skill : undefined;
    }
    const { name, range } = parseSkillReference(idOrReference);
    return this.resolveVersion(name, range, owner, { includeDisabled: true }) ?? undefined;
  }

  /** All versions of `name` visible to `owner`, highest first; the owner's own shadow global ones. */
  getSkillVersions(name: string, owner?: string): Skill[] {
    this.ensureFresh();
    const byVersion = new Map<string, Skill>();
    for (const skill of this.versionCache.get(name) ?? []) {
      if (!isVisibleTo(skill.apiKeyId, owner)) continue;
      const current = byVersion.get(skill.version);
      if (!current || ownerPrecedence(skill.apiKeyId, owner) < ownerPrecedence(current.apiKeyId, owner)) {
        byVersion.set(skill.version, skill);
      }
    }
    return [...byVersion.values()];
  }

  /**
   * The highest version of `name` satisfying `range` that `owner` may see, or null.
   * No range means the highest stable version; prereleases match only when the range names one.
   */
  resolveVersion(name: string, range?: string, owner?: string, options?: ResolveOptions): Skill | null {
    this.ensureFresh();
    const includeDisabled = options?.includeDisabled === true;
    const resolution = this.resolutionFor(owner ?? "", name, range ?? NO_RANGE);
    const cached = includeDisabled ? resolution.any : resolution.enabled;
    if (cached !== undefined) return cached;
    const candidates = this.getSkillVersions(name, owner).filter((skill) => includeDisabled || skill.enabled);
    const best = semver.maxSatisfying(
      candidates.map((skill) => skill.version),
      range === undefined || range === "latest" ? "*" : range,
    );
    const resolved = candidates.find((skill) => skill.version === best) ?? null;
    if (includeDisabled) resolution.any = resolved;
    else resolution.enabled = resolved;
    return resolved;
  }

  /** The cache entry of one owner, name and range, created empty when missing. */
  private resolutionFor(owner: string, name: string, range: string): Resolution {
    const known = this.resolutionCache.get(owner)?.get(name)?.get(range);
    if (known !== undefined) return known;
    // Bounded because owners and ranges come from callers.
    if (this.resolutionCacheEntries >= MAX_RESOLUTION_CACHE_ENTRIES) this.clearResolutions();
    let byName = this.resolutionCache.get(owner);
    if (byName === undefined) {
      byName = new Map();
      this.resolutionCache.set(owner, byName);
    }
    let byRange = byName.get(name);
    if (byRange === undefined) {
      byRange = new Map();
      byName.set(name, byRange);
    }
    const resolution: Resolution = {};
    byRange.set(range, resolution);
    this.resolutionCacheEntries++;
    return resolution;
  }

  private clearResolutions(): void {
    this.resolutionCache.clear();
    this.resolutionCacheEntries = 0;
  }

  /**
   * Looks for writes by other connections now (lookups do so once per task) and
   * emits `change` with origin `external` when there were any. For subscribers that must
   * notice other processes' writes without waiting for a lookup, such as an MCP server.
   */
  checkForChanges(): void {
    this.ensureFresh();
  }

  /** `semver.satisfies`: true when `version` is inside `range`. */
  satisfies(version: string, range: string): boolean {
    return semver.satisfies(version, range);
  }

  /** `semver.compare`: negative, zero or positive. */
  compareVersions(a: string, b: string): number {
    return semver.compare(a, b);
  }

  /**
   * Hides stored skills from every lookup of this instance (`list`, `getSkill`, `resolveVersion`,
   * and so `execute`) while `filter` returns false for them; the database and other processes
   * are unaffected. A loader uses it so that a host serves only what its configured folders
   * provide, although the database holds what other runs and processes registered. Call
   * `invalidateCache()` when the filter's answers change. Returns a function that removes it.
   */
  addServingFilter(filter: (skill: Skill) => boolean): () => void {
    this.servingFilters.add(filter);
    this.invalidateCache();
    return () => {
      if (this.servingFilters.delete(filter)) this.invalidateCache();
    };
  }

  /** Rebuilds both caches from SQLite. */
  loadFromDatabase(): void {
    const { skills: stored, revision } = this.store.readAll();
    const skills =
      this.servingFilters.size === 0
        ? stored
        : stored.filter((skill) => [...this.servingFilters].every((filter) => filter(skill)));
    this.registeredSkills = new Map(skills.map((skill) => [skill.id, skill]));
    const versions = new Map<string, Skill[]>();
    for (const skill of skills) {
      const list = versions.get(skill.name) ?? [];
      list.push(skill);
      versions.set(skill.name, list);
    }
    for (const list of versions.values()) list.sort((a, b) => semver.rcompare(a.version, b.version));
    this.versionCache = versions;
    this.clearResolutions();
    this.seenRevision = revision;
    this.loaded = true;
  }

  /** Drops the caches; the next lookup reloads from SQLite. */
  invalidateCache(): void {
    this.loaded = false;
    this.clearResolutions();
  }

  private all(): Skill[] {
    this.ensureFresh();
    return [...this.registeredSkills.values()];
  }

  /**
   * Serves from cache only while nobody else has changed `skills`: the revision counter,
   * bumped by triggers on every write by any connection or process, is compared with the one
   * the cache reflects. Reading it takes a WAL read lock (a few syscalls; more right after a
   * commit), so lookups share one read until the current task's microtasks have all run: the 64
   * executions a group commit resumes share one, and a lookup in any later task (an I/O
   * callback, a timer, an immediate) reads again. The boundary is the end of the microtasks,
   * not `setImmediate`: an immediate queued from an immediate runs only after the next poll
   * phase, whose I/O callbacks (a message saying "registered") would otherwise be served from
   * before the foreign write.
   */
  private ensureFresh(): void {
    if (this.checkedThisTask) {
      if (!this.loaded) this.loadFromDatabase();
      return;
    }
    this.checkedThisTask = true;
    queueMicrotask(this.endTaskAfterMicrotasks);
    const foreign = this.seenRevision !== -1 && this.store.revision() !== this.seenRevision;
    if (!foreign && this.loaded) return;
    this.loadFromDatabase();
    if (foreign || this.externalChangePending) {
      this.externalChangePending = false;
      this.emit("change", { origin: "external", kind: "reloaded" });
    }
  }

  /** Runs `work` in an immediate transaction, noting whether another writer got there first. */
  private write<T>(work: () => T): T {
    try {
      return this.database
        .transaction(() => {
          const before = this.store.revision();
          if (this.seenRevision !== -1 && before !== this.seenRevision) this.externalChangePending = true;
          const result = work();
          this.seenRevision = this.store.revision();
          return result;
        })
        .immediate();
    } catch (error) {
      throw new SkillboxError("DATABASE_ERROR", `Skill registry write failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}

function toDefinition(registration: SkillRegistration): SkillDefinition {
  const parsed = skillRegistrationSchema.safeParse(registration);
  if (!parsed.success) {
    const subject =
      typeof registration?.name === "string" ? `register("${registration.name}")` : "register()";
    throw new SkillboxError("REGISTRATION_INVALID", formatZodIssues(parsed.error, subject), {
      data: parsed.error.issues,
    });
  }
  const value = parsed.data;
  const output = value.schema?.output ?? value.output;
  return {
    name: value.name,
    version: semver.valid(value.version)!,
    description: value.description,
    apiKeyId: value.apiKeyId,
    schema:
      output === undefined
        ? { input: value.schema?.input ?? value.input ?? {} }
        : { input: value.schema?.input ?? value.input ?? {}, output },
    handler: value.handler,
    runtime: value.runtime,
    timeoutMs: value.timeoutMs,
    retry: value.retry,
    memoryMb: value.memoryMb,
    sandbox: value.sandbox,
    requires: value.requires,
    tags: value.tags,
    enabled: value.enabled,
    source: value.source,
    code: value.code,
    examples: value.examples,
    approval: value.approval,
    approvalTimeoutMs: value.approvalTimeoutMs,
    concurrency: value.concurrency,
    idempotent: value.idempotent,
    queue: value.queue,
    metadata: value.metadata,
  };
}

import type { FailedPackage, LoadedPackage } from "../loader-types.js";
import { displayPath } from "../manifest/read-package.js";
import {
  identityOf,
  isProviding,
  type PackageState,
  type PreparedInterceptor,
  type PreparedPackage,
  type PreparedSkill,
  type PreparedStandIn,
  type ProvidingPackage,
} from "../package-state.js";

/** A loader-managed row of the registry, as a full load sees it (this owner, managed origins). */
export interface RegisteredRow {
  skillId: string;
  name: string;
  version: string;
  /** The package folder that registered it. */
  root: string;
  /** The folder its code may reach (the bundle of a bundle member). */
  codeRoot: string | undefined;
}

/** What {@link planReconcile} decides from. */
export interface ReconcileInput {
  /**
   * `load`: every package the loader's folders hold (a start or `loadAll`): known folders not
   * found are in `prepared` as `absent` (or `kept`), and `rows` lists the registry's entries.
   * `sync`: some folders (a watched change): `loaded`/`reloaded` are announced.
   */
  mode: "load" | "sync";
  /** The folders of this run, sorted by path. */
  prepared: readonly PreparedPackage[];
  /** What the loader knew before the run, by folder. */
  known: ReadonlyMap<string, PackageState>;
  /** Folders refused as duplicates, with the identity they wanted. */
  refused: ReadonlyMap<string, string>;
  /**
   * Known folders outside the run whose manifest file is gone (a folder being renamed, its
   * unlink not yet seen): a folder of the run offering the same takes it over.
   */
  goneManifests: ReadonlySet<string>;
  /** `load` only: the loader's rows in the registry. */
  rows: readonly RegisteredRow[];
}

/** A state that goes. */
export interface PlannedRemoval {
  state: PackageState;
  /**
   * Another folder of the run takes its identity over (a renamed folder): its registry entry or
   * interceptor is replaced, not removed, and no `removed` is announced.
   */
  takenOver: boolean;
}

/** A skill to register. */
export interface PlannedRegistration {
  prepared: PreparedSkill;
  /** The entry of the folder's previous name or version, unregistered once this one is in. */
  replaces: string | undefined;
  /** `sync`: the event announcing it once registered. */
  announce: "loaded" | "reloaded" | undefined;
}

/** An interceptor (or its fail-closed stand-in) to put in force. */
export interface PlannedActivation {
  prepared: PreparedInterceptor | PreparedStandIn;
  /** The folder's previous interceptor name, removed from the executor. */
  replaces: string | undefined;
  announce: "loaded" | "reloaded" | undefined;
}

/** A registry row to unregister (full load): a package no folder provides any more. */
export interface PlannedUnregistration {
  skillId: string;
  /** Reported as removed; undefined for an old version its folder replaced (as a sync replaces it). */
  removed: LoadedPackage | undefined;
}

/**
 * What a run changes, as plain data: no disk, no registry. The loader applies it in this order:
 * errors, forget, remove, refuse/release, register, activate, unregister, then the requirements
 * are checked again and `promote` synced.
 */
export interface ReconcilePlan {
  /** Failures of the run, in folder order: broken packages, stand-ins' reasons, duplicates. */
  errors: FailedPackage[];
  /** Known folders dropped without touching the registry (see `goneManifests`). */
  forget: string[];
  remove: PlannedRemoval[];
  register: PlannedRegistration[];
  activate: PlannedActivation[];
  unregister: PlannedUnregistration[];
  /** Folders refused now, with the identity they wanted: they get it when it frees up. */
  refuse: Array<[root: string, identity: string]>;
  /** Folders no longer refused. */
  release: string[];
  /** Refused folders outside the run whose identity this run freed: synced next. */
  promote: string[];
}

function kindOf(entry: PackageState | ProvidingPackage): "skill" | "interceptor" {
  return entry.kind === "skill" ? "skill" : "interceptor";
}

function duplicateOf(entry: ProvidingPackage, identity: string, holder: string): FailedPackage {
  return {
    root: entry.root,
    file: entry.descriptor.manifestFile,
    code: "MANIFEST_INVALID",
    message: `${displayPath(entry.descriptor.manifestFile)}: ${identity} is already provided by ${displayPath(holder)}; rename it, change its \`version\`, or remove one of the folders`,
  };
}

/**
 * Who holds each identity when the run starts: a known folder keeps what it provides unless the
 * run finds it gone or providing something else. So a folder already serving `echo@1.0.0` keeps
 * it against a new folder offering the same, whichever sorts first; among new folders the first
 * by path wins, so the outcome does not depend on disk order.
 */
function incumbentsOf(
  input: ReconcileInput,
  inRun: ReadonlyMap<string, PreparedPackage>,
): Map<string, string> {
  const claims = new Map<string, string>();
  for (const [root, state] of input.known) {
    const identity = identityOf(state);
    const next = inRun.get(root);
    const keeps =
      next === undefined
        ? !input.goneManifests.has(root)
        : next.kind === "failed" ||
          next.kind === "kept" ||
          (isProviding(next) && identityOf(next) === identity);
    if (keeps && !claims.has(identity)) claims.set(identity, root);
  }
  return claims;
}

/** When a folder's previous state and its new content are both there: what the event calls it. */
function announcementOf(
  mode: ReconcileInput["mode"],
  previous: PackageState | undefined,
): "loaded" | "reloaded" | undefined {
  if (mode !== "sync") return undefined;
  // Replacing a fail-closed stand-in is the plugin's first load, not a reload.
  const first = previous === undefined || (previous.kind === "interceptor" && previous.state === "stand-in");
  return first ? "loaded" : "reloaded";
}

/**
 * The one reconciliation rule of the loader, for a full load and for a watched sync alike: what
 * to register, unregister, activate and remove so that the registry and the executor match the
 * prepared folders. Pure: the same input gives the same plan.
 *
 * - A folder that fails to read keeps its last good version; so does an interceptor plugin
 *   whose new version fails while the old one works (its reason is reported).
 * - A folder with no package any more goes (`removed`), unless its identity moved to another
 *   folder of the run (a rename).
 * - Two folders offering one identity: the one holding it keeps it (see `incumbentsOf`), the
 *   other is refused naming both, and promoted once the identity frees up.
 * - A folder that turns from skill to interceptor (or back) drops the old kind first; one whose
 *   skill changed name or version replaces the old entry.
 * - A full load also unregisters the registry's rows of folders it did not find (except members
 *   of a bundle that failed to read), and old versions of folders it found.
 */
export function planReconcile(input: ReconcileInput): ReconcilePlan {
  const plan: ReconcilePlan = {
    errors: [],
    forget: [],
    remove: [],
    register: [],
    activate: [],
    unregister: [],
    refuse: [],
    release: [],
    promote: [],
  };
  const inRun = new Map(input.prepared.map((entry) => [entry.root, entry]));
  const claims = incumbentsOf(input, inRun);
  /** Identity → the folder of the run that provides it now. */
  const accepted = new Map<string, string>();
  const freed = new Set<string>();
  const removals: PackageState[] = [];

  for (const entry of input.prepared) {
    const previous = input.known.get(entry.root);
    if (entry.kind === "kept") continue;
    if (entry.kind === "failed") {
      plan.errors.push(entry.failure);
      continue;
    }
    if (entry.kind === "absent") {
      if (input.refused.has(entry.root)) plan.release.push(entry.root);
      if (previous !== undefined) {
        removals.push(previous);
        freed.add(identityOf(previous));
      }
      continue;
    }
    if (entry.kind === "stand-in") plan.errors.push(entry.failure);
    const identity = identityOf(entry);
    const holder = claims.get(identity);
    if (holder !== undefined && holder !== entry.root) {
      plan.errors.push(duplicateOf(entry, identity, holder));
      plan.refuse.push([entry.root, identity]);
      continue;
    }
    claims.set(identity, entry.root);
    accepted.set(identity, entry.root);
    if (input.refused.has(entry.root)) plan.release.push(entry.root);
    // A known folder outside the run that held this identity but whose manifest is gone.
    for (const root of input.goneManifests) {
      const state = input.known.get(root);
      if (root !== entry.root && !inRun.has(root) && state !== undefined && identityOf(state) === identity)
        plan.forget.push(root);
    }
    let same = previous;
    if (previous !== undefined && kindOf(previous) !== kindOf(entry)) {
      removals.push(previous);
      freed.add(identityOf(previous));
      same = undefined;
    }
    if (same !== undefined && identityOf(same) !== identity) freed.add(identityOf(same));
    const announce = announcementOf(input.mode, previous);
    if (entry.kind === "skill") {
      const replaces =
        same?.kind === "skill" && same.state === "registered" && identityOf(same) !== identity
          ? same.skill.id
          : undefined;
      plan.register.push({ prepared: entry, replaces, announce });
      continue;
    }
    // A plugin that loaded before keeps its last good version, as a skill does.
    if (entry.kind === "stand-in" && same?.kind === "interceptor" && same.state === "active") continue;
    const replaces =
      same?.kind === "interceptor" && same.interceptor.name !== entry.interceptor.name
        ? same.interceptor.name
        : undefined;
    plan.activate.push({
      prepared: entry,
      replaces,
      announce: entry.kind === "interceptor" ? announce : undefined,
    });
  }

  for (const state of removals) {
    const identity = identityOf(state);
    plan.remove.push({
      state,
      takenOver: accepted.has(identity) && accepted.get(identity) !== state.descriptor.root,
    });
  }
  for (const [root, identity] of input.refused) {
    if (inRun.has(root)) continue;
    if (input.mode === "load") plan.release.push(root);
    else if (freed.has(identity) && !claims.has(identity)) plan.promote.push(root);
  }
  if (input.mode === "load") planRows(input, plan, accepted);
  return plan;
}

/** A full load's rows to unregister: folders not found, and old versions of folders found. */
function planRows(input: ReconcileInput, plan: ReconcilePlan, accepted: ReadonlyMap<string, string>): void {
  const present = new Set(
    input.prepared.filter((entry) => entry.kind !== "absent").map((entry) => entry.root),
  );
  const failedRoots = new Set(
    input.prepared.filter((entry) => entry.kind === "failed").map((entry) => entry.root),
  );
  const providingSkill = new Set(plan.register.map((registration) => registration.prepared.root));
  const handled = new Set<string>();
  for (const { state } of plan.remove)
    if (state.kind === "skill" && state.state === "registered") handled.add(state.skill.id);
  for (const registration of plan.register) if (registration.replaces) handled.add(registration.replaces);
  for (const row of input.rows) {
    const identity = `${row.name}@${row.version}`;
    // Registered again by this run (from this folder or another one): the row is replaced.
    if (handled.has(row.skillId) || accepted.has(identity)) continue;
    if (!present.has(row.root)) {
      // Members of a bundle that failed to read keep their last good version, as a package with
      // a broken manifest does.
      if (row.codeRoot !== undefined && failedRoots.has(row.codeRoot)) continue;
      plan.unregister.push({
        skillId: row.skillId,
        removed: {
          kind: "skill",
          name: row.name,
          version: row.version,
          root: row.root,
          skillId: row.skillId,
        },
      });
    } else if (providingSkill.has(row.root)) {
      // The folder now holds another name or version: the old entry goes, as on a sync.
      plan.unregister.push({ skillId: row.skillId, removed: undefined });
    }
  }
}

import type { Skill, SkillExecutor, SkillRegistry } from "@skillbox/core";
import type { FailedPackage, LoadedPackage } from "../loader-types.js";
import { displayPath } from "../manifest/read-package.js";
import {
  describe,
  failure,
  HandlerSlot,
  type PackageState,
  type RegisteredSkillState,
} from "../package-state.js";
import type { PlannedRegistration, ReconcilePlan } from "./plan-reconcile.js";

/** What applying plans works on: the loader's registry, executor and tables. */
export interface PlanApplierOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /** Owner of the loaded skills (requirements resolve for it). */
  owner: string;
  /** The loader's known packages, by folder: changed in place. */
  packages: Map<string, PackageState>;
  /** Folders refused as duplicates, with the identity they wanted: changed in place. */
  refused: Map<string, string>;
  /** The loader's `loaded`, `reloaded` and `removed` events. */
  announce: (event: "loaded" | "reloaded" | "removed", entry: LoadedPackage) => void;
}

/** What applying a plan did. */
export interface AppliedPlan {
  /** Every failure, in the order reported. */
  failed: FailedPackage[];
  /** Every package removed (also announced as `removed`). */
  removed: LoadedPackage[];
  /** Refused folders to sync next (see `ReconcilePlan.promote`). */
  promote: string[];
}

/**
 * The last step of a reconciliation: applies a plan (see `planReconcile`) to the registry, the
 * executor and the loader's tables, in the plan's order, then checks `requires` again.
 */
export class PlanApplier {
  private readonly options: PlanApplierOptions;

  constructor(options: PlanApplierOptions) {
    this.options = options;
  }

  /**
   * Applies `plan`. Failures go to `onFailure` as they happen (a sync) and are returned (a full
   * load reports them).
   */
  apply(plan: ReconcilePlan, onFailure?: (failed: FailedPackage) => void): AppliedPlan {
    const { registry, executor, packages, refused, announce } = this.options;
    const applied: AppliedPlan = { failed: [], removed: [], promote: plan.promote };
    const fail = (failed: FailedPackage) => {
      applied.failed.push(failed);
      onFailure?.(failed);
    };
    const announcements: Array<["loaded" | "reloaded", string]> = [];
    for (const failed of plan.errors) fail(failed);
    for (const root of plan.forget) packages.delete(root);
    for (const { state, takenOver } of plan.remove) {
      packages.delete(state.descriptor.root);
      // Taken over by another folder of the run: its registration or interceptor replaces this one.
      if (takenOver) continue;
      if (state.kind === "skill" && state.state === "registered") registry.unregisterById(state.skill.id);
      if (state.kind === "interceptor") executor.removeInterceptor(state.interceptor.name);
      this.remove(describe(state), applied);
    }
    for (const [root, identity] of plan.refuse) refused.set(root, identity);
    for (const root of plan.release) refused.delete(root);
    for (const registration of this.registerAll(plan.register, fail)) {
      if (registration.announce !== undefined)
        announcements.push([registration.announce, registration.prepared.root]);
    }
    for (const { prepared, replaces, announce: event } of plan.activate) {
      if (replaces !== undefined) executor.removeInterceptor(replaces);
      if (prepared.descriptor.manifest.enabled !== false) executor.use(prepared.interceptor);
      else executor.removeInterceptor(prepared.interceptor.name);
      packages.set(
        prepared.root,
        prepared.kind === "stand-in"
          ? {
              kind: "interceptor",
              state: "stand-in",
              descriptor: prepared.descriptor,
              interceptor: prepared.interceptor,
              failure: prepared.failure,
            }
          : {
              kind: "interceptor",
              state: "active",
              descriptor: prepared.descriptor,
              interceptor: prepared.interceptor,
            },
      );
      if (event !== undefined) announcements.push([event, prepared.root]);
    }
    for (const { skillId } of plan.unregister) registry.unregisterById(skillId);
    for (const { removed } of plan.unregister) if (removed !== undefined) this.remove(removed, applied);
    for (const [event, root] of announcements) {
      const state = packages.get(root);
      if (state !== undefined) announce(event, describe(state));
    }
    // Requirements may have changed only with what the registry holds.
    const changed =
      plan.forget.length +
        plan.remove.length +
        plan.register.length +
        plan.activate.length +
        plan.unregister.length >
      0;
    if (changed) for (const failed of this.recheckRequirements()) fail(failed);
    return applied;
  }

  private remove(removed: LoadedPackage, applied: AppliedPlan): void {
    applied.removed.push(removed);
    this.options.announce("removed", removed);
  }

  /**
   * Registers the plan's skills in one transaction; if that fails, one by one so each failure is
   * its own. Returns the registrations that went in.
   */
  private registerAll(
    registrations: readonly PlannedRegistration[],
    fail: (failed: FailedPackage) => void,
  ): PlannedRegistration[] {
    if (registrations.length === 0) return [];
    const { registry, packages } = this.options;
    let stored: Skill[] | undefined;
    try {
      stored = registry.registerMany(registrations.map((entry) => entry.prepared.registration));
    } catch {
      stored = undefined;
    }
    const done: PlannedRegistration[] = [];
    registrations.forEach((entry, index) => {
      const { prepared } = entry;
      let skill: Skill;
      try {
        skill = stored?.[index] ?? registry.register(prepared.registration);
      } catch (error) {
        fail(failure(prepared.root, error));
        return;
      }
      // The folder now holds another name or version: the old entry goes.
      if (entry.replaces !== undefined && entry.replaces !== skill.id)
        registry.unregisterById(entry.replaces);
      packages.set(prepared.root, {
        kind: "skill",
        state: "registered",
        descriptor: prepared.descriptor,
        registration: prepared.registration,
        skill,
        handler: new HandlerSlot(prepared.handler),
      });
      done.push(entry);
    });
    return done;
  }

  /**
   * Registers packages whose requirements are now met and unregisters those whose are not,
   * until nothing changes (requirements may chain). Returns the packages left unmet.
   */
  recheckRequirements(): FailedPackage[] {
    const { registry, owner, packages } = this.options;
    let changed = true;
    while (changed) {
      changed = false;
      for (const [root, state] of packages) {
        if (state.kind !== "skill") continue;
        const requires = state.registration.requires;
        if (requires === undefined) continue;
        const unmet = Object.entries(requires)
          .filter(([name, range]) => registry.resolveVersion(name, range, owner) === null)
          .map(([name, range]) => `${name}@${range}`);
        if (unmet.length > 0 && state.state === "registered") {
          registry.unregisterById(state.skill.id);
          packages.set(root, {
            kind: "skill",
            state: "waiting",
            descriptor: state.descriptor,
            registration: state.registration,
            unmet,
            handler: state.handler,
          });
          changed = true;
        } else if (unmet.length === 0 && state.state === "waiting") {
          const next: RegisteredSkillState = {
            kind: "skill",
            state: "registered",
            descriptor: state.descriptor,
            registration: state.registration,
            skill: registry.register(state.registration),
            handler: state.handler,
          };
          packages.set(root, next);
          this.options.announce("loaded", describe(next));
          changed = true;
        } else if (state.state === "waiting") {
          state.unmet = unmet;
        }
      }
    }
    const unmet: FailedPackage[] = [];
    for (const state of packages.values()) {
      if (state.kind !== "skill" || state.state !== "waiting") continue;
      unmet.push({
        root: state.descriptor.root,
        file: state.descriptor.manifestFile,
        code: "REQUIREMENTS_UNMET",
        message: `${displayPath(state.descriptor.manifestFile)}: \`requires\` names skills that are not registered: ${state.unmet.join(", ")}; ${state.descriptor.manifest.name} is not callable until they are`,
      });
    }
    return unmet;
  }
}

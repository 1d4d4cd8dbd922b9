import type { SkillContext } from "@skillbox/core";
import type { TestApi } from "./http-test-api.js";
import { echoSkill } from "./http-test-api.js";

/** A step the test opens when it wants the skill's handler to go on. */
export interface Gate {
  open(): void;
}

/** The `slow` skill: reports progress 1 of 2 once `first` opens, then finishes once `second` opens. */
export interface SlowSkill {
  first: Gate;
  second: Gate;
}

function gate(): Gate & { opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * Registers `slow` (any input, reports `ctx.progress` twice, answers `{ done: true }`) with its
 * handler waiting on two gates the test opens, so a test decides when each step happens instead
 * of sleeping.
 */
export function registerSlowSkill(api: TestApi): SlowSkill {
  const first = gate();
  const second = gate();
  api.host.executor.registerHandler("slow", async (_input: unknown, context: SkillContext) => {
    await first.opened;
    context.progress({ progress: 1, total: 2, message: "halfway" });
    await second.opened;
    context.progress({ progress: 2, total: 2 });
    return { done: true };
  });
  api.host.registry.register(
    echoSkill({
      name: "slow",
      handler: "slow",
      schema: { input: { type: "object" }, output: { type: "object" } },
    }),
  );
  return { first, second };
}

/** Registers `guarded`: the echo skill with `approval: "required"`, owned by `owner`. */
export function registerGuardedSkill(api: TestApi, owner = "public"): void {
  api.host.registry.register(echoSkill({ name: "guarded", approval: "required", apiKeyId: owner }));
}

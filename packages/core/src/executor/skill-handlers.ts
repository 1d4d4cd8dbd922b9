import { SkillboxError } from "../errors/skillbox-error.js";
import type { Skill, SkillHandler } from "../types.js";

/** Finds the handler of a skill whose `handler` reference is not a registered name (used by loaders). */
export type HandlerResolver = (skill: Skill) => SkillHandler | undefined | Promise<SkillHandler | undefined>;

/**
 * Where the executor finds the function a skill's `handler` names: handlers registered by name
 * first, then the resolvers in the order they were added.
 */
export class SkillHandlers {
  private readonly byName = new Map<string, SkillHandler>();
  private readonly resolvers: HandlerResolver[] = [];

  /** Binds `handler` to `name`; throws `REGISTRATION_INVALID` when it is not a function. */
  register(name: string, handler: SkillHandler): void {
    if (typeof handler !== "function") {
      throw new SkillboxError(
        "REGISTRATION_INVALID",
        `registerHandler("${name}"): the handler must be a function`,
      );
    }
    this.byName.set(name, handler);
  }

  /** Removes the handler registered as `name`; returns whether there was one. */
  unregister(name: string): boolean {
    return this.byName.delete(name);
  }

  /** Adds a resolver, consulted after the registered names; returns a remover. */
  addResolver(resolver: HandlerResolver): () => void {
    this.resolvers.push(resolver);
    return () => {
      const index = this.resolvers.indexOf(resolver);
      if (index >= 0) this.resolvers.splice(index, 1);
    };
  }

  /** The handler of `skill` (synchronously when registered by name); `HANDLER_NOT_FOUND` when none. */
  resolve(skill: Skill): SkillHandler | Promise<SkillHandler> {
    return this.byName.get(skill.handler) ?? this.resolveWithResolvers(skill);
  }

  private async resolveWithResolvers(skill: Skill): Promise<SkillHandler> {
    for (const resolver of this.resolvers) {
      const handler = await resolver(skill);
      if (handler !== undefined) return handler;
    }
    throw new SkillboxError(
      "HANDLER_NOT_FOUND",
      `${skill.name}@${skill.version}: no handler "${skill.handler}" is registered; call executor.registerHandler("${skill.handler}", fn)`,
    );
  }
}

import type { SkillHandler } from "@skillbox/core";
import { importSkillModule } from "./import-package-module.js";

/**
 * Handlers of loader-managed skills a loader did not load itself: registered by another
 * process's loader (same database), or a version of a package the loader saw before it changed
 * on disk. They are imported from their path, one entry per path, replaced when the code hash
 * changes, so old versions can be collected; a failed import is not kept (the next call tries
 * again).
 */
export class ForeignHandlers {
  private readonly byPath = new Map<string, { codeHash: string; handler: Promise<SkillHandler> }>();

  /** The handler of the module at `handlerPath` as of `codeHash`; `root` is its package's code root. */
  handlerOf(handlerPath: string, codeHash: string, root: string | undefined): Promise<SkillHandler> {
    const cached = this.byPath.get(handlerPath);
    if (cached !== undefined && cached.codeHash === codeHash) return cached.handler;
    const handler = importSkillModule(handlerPath, root === undefined ? {} : { root }).then(
      (module) => module.handler,
    );
    handler.catch(() => {
      if (this.byPath.get(handlerPath)?.handler === handler) this.byPath.delete(handlerPath);
    });
    this.byPath.set(handlerPath, { codeHash, handler });
    return handler;
  }
}

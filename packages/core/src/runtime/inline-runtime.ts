import type { RuntimeRequest, SkillRuntime } from "./skill-runtime.js";

/**
 * Runs the handler on the caller's thread. Cancellation is cooperative: the handler sees
 * `context.signal`, and the executor stops waiting for it at the deadline either way.
 */
export function createInlineRuntime(): SkillRuntime {
  return {
    name: "inline",
    run(request: RuntimeRequest): Promise<unknown> {
      const handler = request.resolveHandler();
      // A registered handler is returned synchronously; skip the extra turn an await would cost.
      if (typeof handler === "function") return Promise.resolve(handler(request.input, request.context));
      return handler.then((resolved) => resolved(request.input, request.context));
    },
    describe() {
      return { details: { isolation: "none" }, pools: [] };
    },
  };
}

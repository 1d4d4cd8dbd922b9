import type { RuntimeRequest, SkillRuntime } from "./skill-runtime.js";

/**
 * Runs the handler on the caller's thread. Cancellation is cooperative: the handler sees
 * `context.signal`, and the executor stops waiting for it at the deadline either way.
 */
export function createInlineRuntime(): SkillRuntime {
  return {
    name: "inline",
    async run(request: RuntimeRequest): Promise<unknown> {
      const handler = await request.resolveHandler();
      return handler(request.input, request.context);
    },
  };
}

import { type Interceptor, SkillboxError } from "@skillbox/core";
import type { InterceptorPackage } from "../manifest/read-package.js";

/**
 * Where a stand-in runs when the manifest declares no `order`: first, so that no other
 * interceptor can answer (a cache, say) before the refusal. The chain wants a finite number.
 */
const FIRST_ORDER = -Number.MAX_SAFE_INTEGER;

/**
 * The stand-in for an interceptor plugin that failed to load (its module does not import, its
 * factory throws on its options, or its manifest is malformed). It refuses every execution the
 * plugin would have guarded with `INTERCEPTOR_UNAVAILABLE`: a guard that is not there fails
 * closed, never open. Its scope is the manifest's `match` when one is declared — a module that
 * does not load cannot say its own — and otherwise every skill.
 *
 * The caller's message names the interceptor only: the reason (a stack, host paths) goes to
 * the load report and the host's log, not to whoever called the skill.
 */
export function failClosedInterceptor(descriptor: InterceptorPackage): Interceptor {
  const { name, order, match } = descriptor.manifest;
  return {
    name,
    order: order ?? FIRST_ORDER,
    ...(match === undefined ? {} : { match }),
    before() {
      throw new SkillboxError(
        "INTERCEPTOR_UNAVAILABLE",
        `Interceptor "${name}" failed to load, so the executions it guards are refused until it loads; the host's log names the file and the reason`,
        { data: { interceptor: name } },
      );
    },
  };
}

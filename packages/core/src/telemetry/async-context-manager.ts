import { AsyncLocalStorage } from "node:async_hooks";
import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";

/**
 * The smallest OpenTelemetry `ContextManager` on `AsyncLocalStorage`: what a worker thread or a
 * sandbox registers so that `context.active()` follows a handler's awaits, timers and callbacks
 * (core may depend on the API only, not on `@opentelemetry/context-async-hooks`). `bind` binds
 * functions; unlike the SDK's it does not patch event emitters.
 */
export class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const callback = thisArg === undefined ? fn : fn.bind(thisArg);
    return this.storage.run(context, callback as (...args: A) => ReturnType<F>, ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const manager = this;
    const original = target as unknown as (...args: unknown[]) => unknown;
    return function bound(this: unknown, ...args: unknown[]) {
      return manager.with(context, () => original.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

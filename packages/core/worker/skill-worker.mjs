// Runs inside a tinypool worker thread: loads a skill's handler module with jiti (TypeScript or
// JavaScript, ESM or CJS) and runs one task. Plain JavaScript, so it runs the same from the
// TypeScript sources (tests) and from the published package.
import { createLogger, importHandler, serializeError } from "./handler-module.mjs";

/** Handler modules by path, with the code hash they were loaded at (a new hash reloads). */
const modules = new Map();

async function loadHandler(modulePath, codeHash) {
  const cached = modules.get(modulePath);
  if (cached !== undefined && cached.codeHash === codeHash) return cached.handler;
  const handler = await importHandler(modulePath);
  modules.set(modulePath, { codeHash, handler });
  return handler;
}

/** A `ctx.call` that asks the main thread to run the nested execution. */
function createCall(port) {
  if (port === undefined) {
    return () =>
      Promise.reject(
        Object.assign(
          new Error("ctx.call from a worker skill needs `requires` in its manifest, naming what it calls"),
          {
            name: "SkillboxError",
            code: "UNDECLARED_DEPENDENCY",
          },
        ),
      );
  }
  let next = 0;
  const pending = new Map();
  port.on("message", ({ id, output, error }) => {
    const waiter = pending.get(id);
    pending.delete(id);
    if (error === undefined) waiter?.resolve(output);
    else waiter?.reject(Object.assign(new Error(error.message), error));
  });
  return (reference, input) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      port.postMessage({ id, reference, input });
    });
}

/** One task: `{ modulePath, codeHash, input, context, port? }` → `{ ok, output | error }`. */
export default async function runSkillTask(task) {
  const { modulePath, codeHash, input, context, port } = task;
  try {
    const handler = await loadHandler(modulePath, codeHash);
    // signal, logger and call are built on first use: most handlers touch none of them.
    let signal;
    let logger;
    let call;
    const ctx = {
      ...context,
      get signal() {
        signal ??= new AbortController().signal;
        return signal;
      },
      get logger() {
        logger ??= createLogger({
          skill: `${context.skill.name}@${context.skill.version}`,
          executionId: context.executionId,
        });
        return logger;
      },
      call(reference, callInput) {
        call ??= createCall(port);
        return call(reference, callInput);
      },
    };
    const output = await handler(input, ctx);
    try {
      structuredClone(output);
    } catch (error) {
      return {
        ok: false,
        error: {
          name: "SkillboxError",
          code: "OUTPUT_INVALID",
          message: `${context.skill.name}@${context.skill.version} returned an output that cannot leave the worker thread (${error.message}); return plain data`,
        },
      };
    }
    return { ok: true, output };
  } catch (error) {
    return { ok: false, error: serializeError(error) };
  } finally {
    port?.close();
  }
}

// Runs inside a tinypool worker thread: loads a skill's handler module with jiti (TypeScript or
// JavaScript, ESM or CJS) and runs one task. Plain JavaScript, so it runs the same from the
// TypeScript sources (tests) and from the published package.
import { AsyncLocalStorage } from "node:async_hooks";
import Module from "node:module";
import { threadId } from "node:worker_threads";
import { createLogger, importHandler, serializeError } from "./handler-module.mjs";

// A handler's imports resolve from its own package, never from wherever the host was started:
// pnpm's bin shims set NODE_PATH to the CLI's hoisted dependencies, which would hand a skill a
// package it never declared (and only when started that way). A thread inherits the host's
// environment, so it drops NODE_PATH and re-reads Node's global module paths without it.
if (process.env.NODE_PATH !== undefined) {
  delete process.env.NODE_PATH;
  Module._initPaths();
}

/**
 * The task a piece of code runs for. Timers, promises and callbacks a handler starts carry it
 * along, so an error that escapes later still names the task it came from.
 */
const taskScope = new AsyncLocalStorage();
/** The task running now: tinypool hands a thread one task at a time. */
let running;
/** Set once an error escaped: this thread's state is unknown, the host replaces it. */
let retiring = false;
/** Escaped errors no running task owns, not yet handed to the host (which logs them). */
const strays = [];

// An error that escapes a handler is the outcome of the task it belongs to while that task runs,
// and never of another: a timer of a finished task fires while the next one runs (an idle thread
// waits in Atomics.wait, so its timers fire only once the next task arrives).
process.on("uncaughtException", escaped);
process.on("unhandledRejection", escaped);

function escaped(error) {
  retiring = true;
  const owner = taskScope.getStore();
  if (owner !== undefined && owner === running) {
    owner.fail(error);
    return;
  }
  strays.push({ error: serializeError(error), executionId: owner?.executionId, skill: owner?.skill });
  // Nothing runs to carry the report (tinypool itself failed to answer a task): end the thread, so
  // the host fails whatever it waits for with WORKER_EXITED instead of waiting for a timeout.
  if (running === undefined && owner === undefined) {
    createLogger({ threadId }).error("an error escaped outside any task; ending the thread", {
      error: serializeError(error),
    });
    // The host's worker-runtime.ts reads this code (UNSENT_RESULT_EXIT_CODE) to say why.
    exitThread.call(process, 70);
  }
}

// process.exit() from code of a task that has ended would end the thread under the next task: it
// fails as an error of the task it came from instead (logged on the host, the thread retired).
// The running task's own process.exit() ends the thread, and the host fails it with WORKER_EXITED.
const exitThread = process.exit;
process.exit = function exit(code) {
  const owner = taskScope.getStore();
  if (owner !== undefined && owner !== running) {
    retiring = true;
    throw new Error(`process.exit(${code ?? ""}) was called after the execution ended`);
  }
  return exitThread.call(process, code);
};

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

/**
 * One task: `{ modulePath, codeHash, input, context, port? }` → `{ ok, output | error }`, plus
 * `{ retire, threadId, strays }` once this thread must be replaced. A retiring thread refuses new
 * tasks (`{ refused: true }`) without running them, so the host can run them elsewhere.
 */
export default async function runSkillTask(task) {
  const { context, port } = task;
  if (retiring) {
    port?.close();
    return { ok: false, refused: true, ...retirement() };
  }
  const record = {
    executionId: context.executionId,
    skill: `${context.skill.name}@${context.skill.version}`,
  };
  const failed = new Promise((_resolve, reject) => {
    record.fail = reject;
  });
  running = record;
  let result;
  try {
    result = await taskScope.run(record, () => Promise.race([runHandler(task), failed]));
  } catch (error) {
    result = { ok: false, error: serializeError(error) };
  } finally {
    running = undefined;
    port?.close();
  }
  return retiring ? { ...result, ...retirement() } : result;
}

function retirement() {
  return { retire: true, threadId, strays: strays.splice(0) };
}

async function runHandler(task) {
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
    const returned = await handler(input, ctx);
    // The copy is what goes back: it is plain data, so sending it cannot fail (the original's
    // getters would run a second time).
    let output;
    try {
      output = structuredClone(returned);
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
  }
}

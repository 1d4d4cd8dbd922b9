// Runs inside a tinypool worker thread: loads a skill's handler module with jiti (TypeScript or
// JavaScript, ESM or CJS) and runs one task. Plain JavaScript, so it runs the same from the
// TypeScript sources (tests) and from the published package; the error shapes come from core's
// built files (`dist/errors`), which import nothing that a thread would not need.
import { AsyncLocalStorage } from "node:async_hooks";
import Module from "node:module";
import { BroadcastChannel, threadId } from "node:worker_threads";
import { reviveError } from "../dist/errors/revive-error.js";
import { SkillboxError } from "../dist/errors/skillbox-error.js";
import { startRelayedTask } from "../dist/telemetry/install-span-relay.js";
import { traceHeaders } from "../dist/telemetry/trace-headers.js";
import { createLogger, importHandler, serializeError } from "./handler-module.mjs";
import { ProgressThrottle } from "./progress-throttle.mjs";

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
    owner.finish(failure(error));
    return;
  }
  strays.push({ error: serializeError(error), executionId: owner?.executionId, skill: owner?.label });
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

/**
 * The skill versions this thread was told about (`{ modulePath, codeHash, skill }`), by the
 * number the host's tasks name them with: a task carries the rest only when the host may not
 * have told this thread yet, so that most tasks are small to send.
 */
const codes = new Map();

/**
 * Keeps what `introduce` tells about skill version `code`. A newer version of that skill, or a
 * new hash of that module, replaces what came before (a host that still names the old number
 * is told it is unknown, and sends it again).
 */
function learn(code, introduce) {
  for (const [known, other] of codes) {
    if (
      other.skill.id === introduce.skill.id ||
      (other.modulePath === introduce.modulePath && other.codeHash !== introduce.codeHash)
    ) {
      codes.delete(known);
    }
  }
  codes.set(code, introduce);
}

/** The handler of `modulePath` at `codeHash`: at once when loaded, else a promise of it. */
function handlerOf(modulePath, codeHash) {
  const cached = modules.get(modulePath);
  if (cached !== undefined && cached.codeHash === codeHash) return cached.handler;
  return importHandler(modulePath).then((handler) => {
    modules.set(modulePath, { codeHash, handler });
    return handler;
  });
}

/**
 * A `ctx.call` that asks the main thread to run the nested execution; a traced task's call says
 * which of this thread's spans it was made in, so the nested execution is that span's child.
 */
function createCall(port, traced) {
  if (port === undefined) {
    return () =>
      Promise.reject(
        new SkillboxError(
          "UNDECLARED_DEPENDENCY",
          "ctx.call from a worker skill needs `requires` in its manifest, naming what it calls",
        ),
      );
  }
  let next = 0;
  const pending = new Map();
  port.on("message", ({ id, output, error }) => {
    const waiter = pending.get(id);
    pending.delete(id);
    if (error === undefined) waiter?.resolve(output);
    else waiter?.reject(reviveError(error));
  });
  return (reference, input) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      if (!traced) {
        port.postMessage({ id, reference, input });
        return;
      }
      const { traceparent, tracestate } = traceHeaders();
      port.postMessage({ id, reference, input, traceparent, tracestate });
    });
}

/**
 * Where this thread's `ctx.progress()` reports go: a channel of its own to the host (which opens
 * the other end when it first sees the thread, `thread-progress.ts`), keyed by execution and
 * attempt. Tinypool owns the thread's other ports (and fails a thread that posts on parentPort),
 * and a channel per task would cost every task: this one opens on the first report, once.
 */
let progressChannel;

function postProgress(executionId, attempt, report) {
  if (progressChannel === undefined) {
    progressChannel = new BroadcastChannel(`skillbox:progress:${threadId}`);
    progressChannel.unref();
  }
  progressChannel.postMessage([executionId, attempt, report]);
}

/**
 * One task running on this thread: the scope its code runs in, and the one place its result is
 * settled — by the handler, or by an error that escapes while it runs, whichever comes first.
 */
class RunningTask {
  #task;
  #resolve;
  #settled = false;
  /** Made on the task's first `ctx.progress()`: most tasks never report. */
  #progress;

  constructor(task, skill, resolve) {
    this.#task = task;
    this.#resolve = resolve;
    this.executionId = task.executionId;
    this.skill = skill;
    // Only a traced task (its `traceparent` names the host's `worker dispatch` span) pays for
    // the relay: its spans are collected and go back with the result.
    this.relayed =
      task.traceparent === undefined ? undefined : startRelayedTask(task.traceparent, task.tracestate);
  }

  /** `name@version` of the skill, as log lines and errors name it. */
  get label() {
    return `${this.skill.name}@${this.skill.version}`;
  }

  /** Sends a report of the handler's while the task runs (one after it ended is ignored). */
  progress(report) {
    if (this.#settled) return;
    if (this.#progress === undefined) {
      const { executionId, attempt } = this.#task;
      this.#progress = new ProgressThrottle((copy) => postProgress(executionId, attempt, copy));
    }
    this.#progress.report(report);
  }

  /** Settles the task with `result` (a later call is ignored: the first outcome is the task's). */
  finish(result) {
    if (this.#settled) return;
    this.#settled = true;
    running = undefined;
    this.#task.port?.close();
    if (this.#progress !== undefined) {
      // The report still waiting goes before the result; the result says how many went, so the
      // host, whose channel may deliver them after the result, waits for them.
      this.#progress.close();
      result = { ...result, progressSent: this.#progress.sent };
    }
    if (this.relayed !== undefined) result = { ...result, spans: this.relayed.relay.take(), threadId };
    this.#resolve(retiring ? { ...result, ...retirement() } : result);
  }
}

/**
 * One task: `{ code, introduce?, input, executionId, attempt, apiKeyId, sessionId, approval?, traceparent?, tracestate?, port? }`
 * (the host's `WorkerTask`) → `{ ok, output | error, progressSent?, spans?, threadId? }` (spans when traced), plus `{ retire, threadId, strays }` once this
 * thread must be replaced. A retiring thread refuses new tasks (`{ refused: true }`) without
 * running them, so the host can run them elsewhere; a task naming a skill version this thread was
 * not told about is answered `{ unknownCode: true }`, and comes again with `introduce`. A handler
 * that is loaded and answers synchronously runs without a promise of this file's own: each costs
 * a turn and, with the task scope on, a hook.
 */
export default function runSkillTask(task) {
  if (retiring) {
    task.port?.close();
    return { ok: false, refused: true, ...retirement() };
  }
  if (task.introduce !== undefined) learn(task.code, task.introduce);
  const code = codes.get(task.code);
  if (code === undefined) {
    task.port?.close();
    return { ok: false, unknownCode: true };
  }
  return new Promise((resolve) => {
    const record = new RunningTask(task, code.skill, resolve);
    running = record;
    taskScope.run(record, () => (record.relayed === undefined ? start() : record.relayed.run(start)));
    function start() {
      let result;
      try {
        result = runHandler(task, code, record);
      } catch (error) {
        result = failure(error);
      }
      if (result instanceof Promise) {
        result.then(
          (settled) => record.finish(settled),
          (error) => record.finish(failure(error)),
        );
      } else {
        record.finish(result);
      }
    }
  });
}

function retirement() {
  return { retire: true, threadId, strays: strays.splice(0) };
}

/** The task's result, or a promise of it when the module must load or the handler is async. */
function runHandler(task, code, record) {
  const handler = handlerOf(code.modulePath, code.codeHash);
  if (typeof handler === "function") return callHandler(handler, task, code.skill, record);
  return handler.then((loaded) => callHandler(loaded, task, code.skill, record), failure);
}

function callHandler(handler, task, skill, record) {
  let returned;
  try {
    returned = handler(task.input, new WorkerContext(task, skill, record));
  } catch (error) {
    return failure(error);
  }
  if (typeof returned?.then === "function") {
    return Promise.resolve(returned).then((value) => success(value, skill), failure);
  }
  return success(returned, skill);
}

/**
 * The handler's `ctx`, shaped as the inline runtime's: the execution's fields, and `signal`,
 * `logger`, `call` and `progress` on the prototype, built on first use (most handlers touch none
 * of them).
 */
class WorkerContext {
  #port;
  #record;
  #signal;
  #logger;
  #call;

  constructor(task, skill, record) {
    this.executionId = task.executionId;
    this.attempt = task.attempt;
    this.apiKeyId = task.apiKeyId;
    this.sessionId = task.sessionId;
    // Sent only when granted: a task of a skill that needs no approval carries no field for it.
    this.approval = task.approval ?? null;
    // A copy per task, as each task's own message was: what one handler does to it stays its own.
    this.skill = { id: skill.id, name: skill.name, version: skill.version };
    this.#port = task.port;
    this.#record = record;
  }

  /** The W3C headers of the span active now (the host's `worker dispatch` or the handler's own); `{}` untraced. */
  traceHeaders() {
    return this.#record.relayed === undefined ? {} : traceHeaders();
  }

  /** Reports how far the work is; never throws (the host drops a malformed report with a log line). */
  progress(report) {
    this.#record.progress(report);
  }

  /** Never aborted from inside: the host stops a worker skill by terminating its thread. */
  get signal() {
    this.#signal ??= new AbortController().signal;
    return this.#signal;
  }

  get logger() {
    this.#logger ??= createLogger({
      skill: `${this.skill.name}@${this.skill.version}`,
      executionId: this.executionId,
    });
    return this.#logger;
  }

  call(reference, input) {
    this.#call ??= createCall(this.#port, this.#record.relayed !== undefined);
    return this.#call(reference, input);
  }
}

/**
 * The result for what the handler returned. An object goes back as a copy: it is plain data, so
 * sending it cannot fail (the original's getters would run a second time). A primitive is its own
 * copy.
 */
function success(returned, skill) {
  if (
    returned === null ||
    (typeof returned !== "object" && typeof returned !== "function" && typeof returned !== "symbol")
  ) {
    return { ok: true, output: returned };
  }
  try {
    return { ok: true, output: structuredClone(returned) };
  } catch (error) {
    const { name, version } = skill;
    return failure(
      new SkillboxError(
        "OUTPUT_INVALID",
        `${name}@${version} returned an output that cannot leave the worker thread (${error.message}); return plain data`,
      ),
    );
  }
}

function failure(error) {
  return { ok: false, error: serializeError(error) };
}

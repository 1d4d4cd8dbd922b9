// Shared by the worker-thread entry and the container sandbox runner: loading a handler
// module, and carrying errors and log lines across a process or thread boundary. Plain
// JavaScript, so it runs unbuilt, and it imports only jiti, so it loads inside a sandbox.
import { createJiti } from "jiti";

/**
 * Imports a handler module with jiti (TypeScript or JavaScript, ESM or CJS) and returns its
 * handler: the default export when it is a function, or the `handler` of `defineSkill({...})`.
 * Throws a `HANDLER_INVALID`-coded error when the module fails to load or exports neither.
 * `alias` maps import specifiers (container sandboxes point `@skillbox/core` at the light entry).
 */
export async function importHandler(modulePath, alias) {
  // No module cache: after a hot reload the new code runs, imports included, and the old
  // module can be collected once nothing refers to it.
  const jiti = createJiti(modulePath, {
    moduleCache: false,
    fsCache: false,
    tryNative: false,
    interopDefault: true,
    ...(alias === undefined ? {} : { alias }),
  });
  let namespace;
  try {
    namespace = await jiti.import(modulePath);
  } catch (error) {
    // A module that cannot load will not load on a retry either.
    throw Object.assign(new Error(`${modulePath}: failed to load: ${error?.message ?? error}`), {
      name: "SkillboxError",
      code: "HANDLER_INVALID",
      retryable: false,
    });
  }
  const exported =
    namespace !== null && typeof namespace === "object" && "default" in namespace
      ? namespace.default
      : namespace;
  const handler =
    typeof exported === "function"
      ? exported
      : exported !== null && typeof exported === "object" && typeof exported.handler === "function"
        ? exported.handler
        : undefined;
  if (handler === undefined) {
    throw Object.assign(
      new Error(`${modulePath}: the default export must be a handler function or defineSkill({...})`),
      {
        name: "SkillboxError",
        code: "HANDLER_INVALID",
      },
    );
  }
  return handler;
}

/**
 * Errors cross the thread boundary as plain data: structured clone would drop `code` and `data`.
 * Every field is one the host reads, of the type it reads: a field of another type (a function
 * `code`, a symbol `retryable`) would fail the send of the whole result, and lose the task's error.
 */
export function serializeError(error) {
  if (error instanceof Error) {
    let data;
    try {
      data = error.data === undefined ? undefined : structuredClone(error.data);
    } catch {
      data = undefined;
    }
    const { name, code, message, stack, retryable } = error;
    return {
      name: typeof name === "string" ? name : "Error",
      code: typeof code === "string" || typeof code === "number" ? code : undefined,
      message: typeof message === "string" ? message : String(message),
      stack: typeof stack === "string" ? stack : undefined,
      data,
      retryable: typeof retryable === "boolean" ? retryable : undefined,
    };
  }
  return { name: "Error", message: String(error) };
}

/** A logger writing one JSON line per entry to stderr, which the host reads as log lines. */
export function createLogger(fields) {
  const write = (level) => (message, extra) =>
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields, ...extra })}\n`,
    );
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

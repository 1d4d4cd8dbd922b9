// Shared by the worker-thread entry, the container sandbox runner and the loader: what a handler
// module may export and how it is loaded, and carrying errors and log lines across a process or
// thread boundary. Plain JavaScript, so it runs unbuilt; it imports only jiti, Node and two
// built files of core's errors (which import nothing else), so it loads inside a sandbox.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { dirname, isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";
import { serializeError } from "../dist/errors/serialize-error.js";
import { SkillboxError } from "../dist/errors/skillbox-error.js";
import { HoistedImportGuard } from "./hoisted-import-guard.mjs";

export { startRelayedTask } from "../dist/telemetry/install-span-relay.js";
export { traceHeaders } from "../dist/telemetry/trace-headers.js";
export { ProgressThrottle } from "./progress-throttle.mjs";
export { HoistedImportGuard, SkillboxError, serializeError };

/**
 * Where the loader keeps a package's snapshots (`snapshotPackage` in `@skillbox/loader`): a
 * worker or sandbox loads a skill's code from `<package>/node_modules/.skillbox-snapshots/<hash>/`,
 * and messages name the package's own files instead.
 */
const SNAPSHOT_SEGMENT = /[/\\]node_modules[/\\]\.skillbox-snapshots[/\\][^/\\]+(?=[/\\]|$)/;

/** The path in the package a path in one of its snapshots stands for (any other path as is). */
export function packagePathOf(path) {
  return path.replace(SNAPSHOT_SEGMENT, "");
}

/** The snapshot folder a path lies in (the package's code as of one version), if any. */
function snapshotRootOf(path) {
  const match = SNAPSHOT_SEGMENT.exec(path);
  return match === null ? undefined : path.slice(0, match.index + match[0].length);
}

/**
 * The entry files of this `@skillbox/core`, which handlers get for `@skillbox/core` and
 * `@skillbox/core/handler` whatever their folder: the host provides its own packages, as Vite
 * provides its client, so a skill package only declares them as peer dependencies (and may have
 * no `node_modules` at all). Resolved from this file, so the host's copy is found in npm's and
 * pnpm's layouts alike. `light` maps both to the light entry (a sandbox has neither SQLite nor
 * the other dependencies of the full entry), and gives handlers the sandbox's own
 * `@opentelemetry/api` (mounted beside core): the copy whose globals the runner registered, so
 * a handler's spans reach the host without the skill installing the API.
 */
export function hostCoreAliases({ light = false } = {}) {
  const key = light ? "light" : "full";
  let aliases = resolvedAliases.get(key);
  if (aliases === undefined) {
    const handlerEntry = fileURLToPath(import.meta.resolve("@skillbox/core/handler"));
    aliases = {
      // jiti tries the longer specifier first, so the subpath never becomes `<entry>/handler`.
      "@skillbox/core/handler": handlerEntry,
      "@skillbox/core": light ? handlerEntry : fileURLToPath(import.meta.resolve("@skillbox/core")),
    };
    if (light) aliases["@opentelemetry/api"] = fileURLToPath(import.meta.resolve("@opentelemetry/api"));
    resolvedAliases.set(key, aliases);
  }
  return aliases;
}

/** {@link hostCoreAliases} by kind, resolved once per thread or process. */
const resolvedAliases = new Map();

/**
 * The package name of a bare import specifier (`@scope/pkg/sub` → `@scope/pkg`, `zod/v4` →
 * `zod`); undefined for relative and absolute paths, URLs, `#imports` and Node's built-ins, which
 * no `npm install` provides.
 */
export function packageNameOf(specifier) {
  if (/^(?:[./\\#]|[a-zA-Z]:[/\\]|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(specifier)) return undefined;
  if (isBuiltin(specifier)) return undefined;
  const segments = specifier.split("/");
  if (specifier.startsWith("@"))
    return segments.length >= 2 && segments[1] !== "" ? segments.slice(0, 2).join("/") : undefined;
  return segments[0] === "" ? undefined : segments[0];
}

/** The file and specifier of a failed import, from Node's CJS (`MODULE_NOT_FOUND`) or ESM error. */
function missingImportOf(error) {
  const code = error?.code;
  if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") return undefined;
  const message = String(error.message ?? "");
  const specifier = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  if (specifier === undefined) return undefined;
  const importer = Array.isArray(error.requireStack)
    ? error.requireStack[0]
    : /imported from (.+?)\s*$/m.exec(message)?.[1];
  if (typeof importer !== "string") return undefined;
  return { specifier, importer: importer.startsWith("file:") ? fileURLToPath(importer) : importer };
}

/** The nearest folder at or above `directory` holding a package.json, with that manifest (or undefined). */
function nearestManifest(directory) {
  for (let folder = directory; ; folder = dirname(folder)) {
    const file = join(folder, "package.json");
    if (existsSync(file)) {
      try {
        return { folder, manifest: JSON.parse(readFileSync(file, "utf8")) };
      } catch {
        return { folder, manifest: {} };
      }
    }
    if (dirname(folder) === folder) return undefined;
  }
}

function declares(manifest, name) {
  return ["dependencies", "optionalDependencies", "peerDependencies", "devDependencies"].some(
    (field) => manifest?.[field] !== null && typeof manifest?.[field] === "object" && name in manifest[field],
  );
}

/**
 * The message for a module that failed to load because a package it imports is not installed
 * where Node looks for it (the importing file's folder and the `node_modules` folders above it),
 * naming the importing file, the package folder and the fix; undefined for any other failure.
 * `root` is the skill's folder, named when no package.json is found above the file. `display`
 * turns a path into the one the user knows (a snapshot's or a sandbox's into the package's).
 */
export function missingModuleMessage(error, { root, display = (path) => path }) {
  const missing = missingImportOf(error);
  if (missing === undefined) return undefined;
  const name = packageNameOf(missing.specifier);
  if (name === undefined) return undefined;
  const file = display(missing.importer);
  const found = nearestManifest(dirname(missing.importer));
  if (found === undefined) {
    const folder = display(root);
    return `${file} imports '${missing.specifier}', which is not installed for ${folder}: create ${join(folder, "package.json")} with \`${name}\` in its dependencies, and install them`;
  }
  const folder = display(found.folder);
  const manifest = join(folder, "package.json");
  if (declares(found.manifest, name)) {
    return `${file} imports '${missing.specifier}', which ${manifest} declares but is not installed there: install the dependencies of ${folder} (npm install)`;
  }
  return `${file} imports '${missing.specifier}', which is not installed for ${folder}: add \`${name}\` to ${manifest} dependencies and install it`;
}

/** A path relative to the working directory when it is inside it (as the loader shows paths). */
export function displayPathFromCwd(path) {
  const fromCwd = relative(process.cwd(), path);
  return fromCwd !== "" && !fromCwd.startsWith("..") ? fromCwd : path;
}

/**
 * What a handler module may export: the one definition the loader (inline skills, `skillbox
 * validate`), worker threads and container sandboxes all apply. `exported` is the module's
 * default export (`module.exports` for CommonJS, the module itself when it has no default); it
 * must be the handler function `(input, ctx) => output`, or the value of `defineSkill({...})`,
 * whose `handler` runs (and whose schemas the loader reads). Anything else — a number, an object
 * that merely has a `handler`, a named `handler` export without a default — is refused with the
 * message of the `HANDLER_INVALID`, naming `file` (the path to show) and the fix.
 */
export function readHandlerExport(exported, file) {
  if (typeof exported === "function") return { handler: exported };
  if (isSkillDefinition(exported)) return { handler: exported.handler, definition: exported };
  const fix =
    exported !== null && typeof exported === "object" && typeof exported.handler === "function"
      ? ": export default defineSkill({ handler }), or the handler function itself"
      : "";
  return {
    refusal: `${file}: the default export must be a handler function or defineSkill({...}), got ${describeExport(exported)}${fix}`,
  };
}

/**
 * The value of `defineSkill({...})`, also from another copy of core: the mark `isDefinedSkill`
 * of `@skillbox/core` checks, tested here because that module brings zod, which a thread or a
 * sandbox should not load just to run a handler.
 */
function isSkillDefinition(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    value.kind === "skillbox.skill" &&
    typeof value.handler === "function"
  );
}

/** What a module exported, for a message: `null`, `an array`, `an object with keys a, b`, `number`. */
export function describeExport(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object"
    ? `an object with keys ${Object.keys(value).join(", ") || "(none)"}`
    : typeof value;
}

/**
 * Imports a handler module with jiti (TypeScript or JavaScript, ESM or CJS) and returns its
 * handler, as {@link readHandlerExport} reads it. Throws a `HANDLER_INVALID` `SkillboxError`
 * when the module fails to load or exports no handler; a package it imports that is not installed
 * for it is named with the fix.
 *
 * `@skillbox/core` and `@skillbox/core/handler` are the host's (see {@link hostCoreAliases};
 * `lightCore` for sandboxes); everything else resolves from the handler's own folder. `root` is
 * the skill's folder (default: the module's, or its snapshot's). Errors name files by
 * `hostPath(path)` — the path the user knows (default: a snapshot file's path in its package) —
 * relative to the working directory unless `relativeToCwd` is false (a sandbox's is not the host's).
 */
export async function importHandler(modulePath, options = {}) {
  const {
    lightCore = false,
    root = snapshotRootOf(modulePath) ?? dirname(modulePath),
    hostPath = packagePathOf,
    relativeToCwd = true,
  } = options;
  const display = relativeToCwd ? (path) => displayPathFromCwd(hostPath(path)) : hostPath;
  // No module cache: after a hot reload the new code runs, imports included, and the old
  // module can be collected once nothing refers to it.
  const jitiOptions = {
    moduleCache: false,
    fsCache: false,
    tryNative: false,
    interopDefault: true,
    alias: hostCoreAliases({ light: lightCore }),
  };
  // A sandbox holds only the skill's folder, so nothing hoisted can be reached there; on the
  // host, packages above the skill's folder are checked (see HoistedImportGuard).
  const jiti = lightCore
    ? createJiti(modulePath, jitiOptions)
    : createGuardedJiti(
        modulePath,
        jitiOptions,
        new HoistedImportGuard(packagePathOf(root), modulePath, { provided: providedFolders() }),
      );
  let namespace;
  try {
    namespace = await jiti.import(modulePath);
  } catch (error) {
    // A module that cannot load will not load on a retry either.
    const message =
      missingModuleMessage(error, { root, display }) ??
      `${display(modulePath)}: failed to load: ${error?.message ?? error}`;
    throw new SkillboxError("HANDLER_INVALID", message, {
      retryable: false,
      data: { file: hostPath(modulePath) },
    });
  }
  const exported =
    namespace !== null && typeof namespace === "object" && "default" in namespace
      ? namespace.default
      : namespace;
  const read = readHandlerExport(exported, display(modulePath));
  if (read.refusal !== undefined) {
    throw new SkillboxError("HANDLER_INVALID", read.refusal, {
      retryable: false,
      data: { file: hostPath(modulePath) },
    });
  }
  return read.handler;
}

const requireHere = createRequire(import.meta.url);
/** This `@skillbox/core`'s folder: the entry files `hostCoreAliases` gives handlers live in it. */
const CORE_FOLDER = fileURLToPath(new URL("..", import.meta.url));
let provided;

/**
 * The folders of what the host provides to every handler: this `@skillbox/core` and the packages
 * installed for it in its own `node_modules` (pnpm's layout). Core's files import those, and they
 * pass through jiti whenever core is loaded from source (the workspace's `@skillbox/source`
 * condition), so they are no skill's undeclared import.
 */
function providedFolders() {
  if (provided !== undefined) return provided;
  provided = [CORE_FOLDER];
  const own = join(CORE_FOLDER, "node_modules");
  let entries = [];
  try {
    entries = readdirSync(own, { withFileTypes: true });
  } catch {
    return provided;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    if (!entry.name.startsWith("@")) {
      provided.push(join(own, entry.name));
      continue;
    }
    try {
      for (const scoped of readdirSync(join(own, entry.name))) provided.push(join(own, entry.name, scoped));
    } catch {
      // An unreadable scope folder provides nothing.
    }
  }
  return provided;
}
let jitiFactory;

/**
 * jiti's internal factory and Babel transform (`dist/jiti.cjs`, `dist/babel.cjs`), which its
 * public entry (`lib/jiti.mjs`) calls with fixed hooks: built here with hooks that check every
 * module jiti loads natively or transpiles against `guard`. jiti answers a refused native load
 * by transpiling the file itself, so the transform refuses too, before any of its code runs.
 * The loader builds its inline instances the same way (`importFresh`); core and the loader
 * depend on the same jiti range, whose internal layout the worker tests exercise.
 */
function createGuardedJiti(modulePath, options, guard) {
  if (jitiFactory === undefined) {
    const folder = dirname(requireHere.resolve("jiti/package.json"));
    let babel;
    jitiFactory = {
      create: requireHere(join(folder, "dist", "jiti.cjs")),
      transform: (transformOptions) => {
        babel ??= requireHere(join(folder, "dist", "babel.cjs"));
        return babel(transformOptions);
      },
    };
  }
  const refusalOf = (target) => {
    const text = typeof target === "string" ? target : target.href;
    const file = text.startsWith("file:") ? fileURLToPath(text) : isAbsolute(text) ? text : undefined;
    return file === undefined ? undefined : guard.refusalOf(file);
  };
  const transform = (transformOptions) => {
    const refusal =
      transformOptions.filename === undefined ? undefined : refusalOf(transformOptions.filename);
    if (refusal !== undefined) throw refusal;
    return jitiFactory.transform(transformOptions);
  };
  return jitiFactory.create(
    modulePath,
    { ...options, transform },
    {
      onError(error) {
        throw error;
      },
      nativeImport(target) {
        const refusal = refusalOf(target);
        return refusal === undefined ? import(target) : Promise.reject(refusal);
      },
      createRequire(filename) {
        const native = createRequire(filename);
        const guarded = (target) => {
          const refusal = refusalOf(target);
          if (refusal !== undefined) throw refusal;
          return native(target);
        };
        return Object.assign(guarded, {
          resolve: native.resolve,
          cache: native.cache,
          main: native.main,
          extensions: native.extensions,
        });
      },
    },
  );
}

/** A logger writing one JSON line per entry to stderr, which the host reads as log lines. */
export function createLogger(fields) {
  const write = (level) => (message, extra) =>
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields, ...extra })}\n`,
    );
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

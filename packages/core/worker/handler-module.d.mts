// Types of `@skillbox/core/handler-module` (handler-module.mjs is plain JavaScript, so that it
// runs unbuilt in worker threads and sandboxes). The loader uses `readHandlerExport` and
// `missingModuleMessage` so that what a module may export, and a missing package, read the same
// whichever runtime loads the handler.
import type { DefinedSkill } from "../dist/define-skill.js";
import type { SkillHandler } from "../dist/types.js";

export { serializeError } from "../dist/errors/serialize-error.js";
export { SkillboxError } from "../dist/errors/skillbox-error.js";
export { startRelayedTask } from "../dist/telemetry/install-span-relay.js";
export { traceHeaders } from "../dist/telemetry/trace-headers.js";

/** What {@link readHandlerExport} found: the handler (and the `defineSkill` value), or why not. */
export type HandlerExport =
  | { handler: SkillHandler; definition?: DefinedSkill; refusal?: undefined }
  | { refusal: string; handler?: undefined; definition?: undefined };

/**
 * What a handler module may export, for every runtime: its default export (`module.exports` for
 * CommonJS) is the handler function or the value of `defineSkill({...})`. Anything else is
 * refused with the `HANDLER_INVALID` message naming `file` (the path to show) and the fix.
 */
export function readHandlerExport(exported: unknown, file: string): HandlerExport;

/** What a module exported, for a message: `null`, `an array`, `an object with keys a, b`, `number`. */
export function describeExport(value: unknown): string;

/** The path in the package a path in one of its loader snapshots stands for (any other path as is). */
export function packagePathOf(path: string): string;

/**
 * The host's `@skillbox/core` entry files, by the specifiers handlers import them with; `light`
 * maps both to the light entry (`@skillbox/core/handler`) and adds `@opentelemetry/api` (the
 * sandbox's copy, whose globals its runner registers).
 */
export function hostCoreAliases(options?: { light?: boolean }): Record<string, string>;

/**
 * The package name of a bare import specifier (`@scope/pkg/sub` → `@scope/pkg`, `zod/v4` →
 * `zod`); undefined for paths, URLs, `#imports` and Node's built-ins.
 */
export function packageNameOf(specifier: string): string | undefined;

/**
 * The message for a module that failed to load because a package it imports is not installed for
 * it, naming the importing file, the package folder and the fix; undefined for any other failure.
 */
export function missingModuleMessage(
  error: unknown,
  options: { root: string; display?: (path: string) => string },
): string | undefined;

/** A path relative to the working directory when it is inside it. */
export function displayPathFromCwd(path: string): string;

/** Options of {@link importHandler}. */
export interface ImportHandlerOptions {
  /** Give handlers the light entry for `@skillbox/core` too (sandboxes). */
  lightCore?: boolean;
  /** The skill's folder, named when no package.json is found (default: the module's). */
  root?: string;
  /** The path the user knows for a path here (default: a snapshot file's path in its package). */
  hostPath?: (path: string) => string;
  /** Show paths inside the working directory relative to it (default true). */
  relativeToCwd?: boolean;
}

/** Imports a handler module and returns its handler; throws a `HANDLER_INVALID` `SkillboxError`. */
export function importHandler(modulePath: string, options?: ImportHandlerOptions): Promise<SkillHandler>;

/**
 * Sends one task's progress reports through `send` as small plain copies (primitives only, the
 * message cut at 500 characters; the host validates them), in order and bounded: a burst of 32 at
 * once, then one per 50 ms, the latest replacing one still waiting; `close()` sends the one waiting.
 */
export class ProgressThrottle {
  constructor(send: (report: unknown) => void);
  /** Reports sent so far. */
  readonly sent: number;
  /** Takes one report; never throws. */
  report(report: unknown): void;
  /** Sends the report still waiting, if any; later reports are ignored. */
  close(): void;
}

/** A logger writing one JSON line per entry to stderr. */
export function createLogger(
  fields: Record<string, unknown>,
): Record<"debug" | "info" | "warn" | "error", (message: string, extra?: Record<string, unknown>) => void>;

/**
 * Refuses the packages a skill only reaches because they were hoisted above its folder for
 * someone else (npm's flat layout): one found in a `node_modules` above `root` loads only when a
 * package.json between the skill and that folder declares it.
 */
export class HoistedImportGuard {
  /**
   * `root` is the skill package's folder; `importer` names the module being imported in errors;
   * `provided` are folders of packages the host provides to every handler, loaded wherever they are.
   */
  constructor(root: string, importer: string, options?: { provided?: string[] });
  /** Node's `ERR_MODULE_NOT_FOUND`, shaped for the missing-package message, or undefined: it may load. */
  refusalOf(file: string): Error | undefined;
}

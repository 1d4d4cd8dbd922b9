import { resolve } from "node:path";
import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";

/** Settings of the `file-workspace` skill. */
export interface FileWorkspaceSettings {
  /** Folder holding one workspace per owner (`SKILLBOX_WORKSPACE_DIR`, default `.skillbox/workspaces`). */
  root: string;
  /** Largest file read or written, in bytes (`SKILLBOX_WORKSPACE_MAX_FILE_BYTES`, default 1 MiB). */
  maxFileBytes: number;
  /** Largest total size of one owner's files, in bytes (`SKILLBOX_WORKSPACE_MAX_BYTES`, default 100 MiB). */
  maxWorkspaceBytes: number;
  /** Most entries one `list` returns (`SKILLBOX_WORKSPACE_LIST_LIMIT`, default 1000). */
  listLimit: number;
  /** Most files and folders (together) in one owner's workspace (`SKILLBOX_WORKSPACE_MAX_ENTRIES`, default 10000). */
  maxEntries: number;
  /** Most path segments of a workspace path, folders and file name together (`SKILLBOX_WORKSPACE_MAX_DEPTH`, default 32). */
  maxDepth: number;
}

/**
 * What every file and folder costs toward `maxWorkspaceBytes` on top of its content: one disk
 * block. Without it, thousands of empty folders (megabytes of disk) would count as nothing.
 */
export const WORKSPACE_ENTRY_BYTES = 4096;

/** The built-in defaults, used for every setting neither the environment nor the factory sets. */
const DEFAULT_FILE_WORKSPACE_SETTINGS: Readonly<Omit<FileWorkspaceSettings, "root">> = Object.freeze({
  maxFileBytes: 1024 * 1024,
  maxWorkspaceBytes: 100 * 1024 * 1024,
  listLimit: 1000,
  maxEntries: 10_000,
  maxDepth: 32,
});

const DEFAULT_ROOT = ".skillbox/workspaces";

const positiveInteger = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const settingsSchema = z
  .object({
    root: z.string().min(1).optional(),
    maxFileBytes: positiveInteger.optional(),
    maxWorkspaceBytes: positiveInteger.optional(),
    listLimit: positiveInteger.optional(),
    maxEntries: positiveInteger.optional(),
    maxDepth: positiveInteger.optional(),
  })
  .strict();

/** How each setting is called in the environment, for messages. */
const ENVIRONMENT_NAMES: Record<keyof FileWorkspaceSettings, string> = {
  root: "SKILLBOX_WORKSPACE_DIR",
  maxFileBytes: "SKILLBOX_WORKSPACE_MAX_FILE_BYTES",
  maxWorkspaceBytes: "SKILLBOX_WORKSPACE_MAX_BYTES",
  listLimit: "SKILLBOX_WORKSPACE_LIST_LIMIT",
  maxEntries: "SKILLBOX_WORKSPACE_MAX_ENTRIES",
  maxDepth: "SKILLBOX_WORKSPACE_MAX_DEPTH",
};

function integerFromEnvironment(
  env: NodeJS.ProcessEnv,
  key: Exclude<keyof FileWorkspaceSettings, "root">,
): number | undefined {
  const name = ENVIRONMENT_NAMES[key];
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(value) || value <= 0) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `${name} must be a positive whole number, got ${JSON.stringify(raw)}; unset it for the default ${DEFAULT_FILE_WORKSPACE_SETTINGS[key]}`,
      { data: { variable: name, value: raw } },
    );
  }
  return value;
}

/**
 * Validates explicit settings (a factory's options) and fills in the defaults. A malformed field
 * throws `CONFIG_INVALID` naming it and the fix.
 */
export function resolveFileWorkspaceSettings(
  settings: Partial<FileWorkspaceSettings> = {},
): FileWorkspaceSettings {
  const parsed = settingsSchema.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "settings";
    throw new SkillboxError(
      "CONFIG_INVALID",
      `file-workspace: \`${field}\` ${issue?.message ?? "is invalid"}; byte sizes, listLimit, maxEntries and maxDepth must be positive whole numbers, root a non-empty folder path`,
      { data: { field } },
    );
  }
  return {
    ...DEFAULT_FILE_WORKSPACE_SETTINGS,
    ...Object.fromEntries(Object.entries(parsed.data).filter(([, value]) => value !== undefined)),
    root: resolve(parsed.data.root ?? DEFAULT_ROOT),
  };
}

/**
 * Reads the settings from environment variables: `SKILLBOX_WORKSPACE_DIR`,
 * `SKILLBOX_WORKSPACE_MAX_FILE_BYTES`, `SKILLBOX_WORKSPACE_MAX_BYTES`,
 * `SKILLBOX_WORKSPACE_LIST_LIMIT`, `SKILLBOX_WORKSPACE_MAX_ENTRIES` and
 * `SKILLBOX_WORKSPACE_MAX_DEPTH`. Unset or empty variables take the defaults; a malformed one
 * throws `CONFIG_INVALID` naming the variable and the fix.
 */
export function readFileWorkspaceSettings(env: NodeJS.ProcessEnv = process.env): FileWorkspaceSettings {
  const root = env[ENVIRONMENT_NAMES.root];
  return resolveFileWorkspaceSettings({
    root: root?.trim() ? root : undefined,
    maxFileBytes: integerFromEnvironment(env, "maxFileBytes"),
    maxWorkspaceBytes: integerFromEnvironment(env, "maxWorkspaceBytes"),
    listLimit: integerFromEnvironment(env, "listLimit"),
    maxEntries: integerFromEnvironment(env, "maxEntries"),
    maxDepth: integerFromEnvironment(env, "maxDepth"),
  });
}

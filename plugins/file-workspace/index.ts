import { type DefinedSkill, defineSkill, ownerWorkspace } from "@skillbox/core/handler";
import { fileWorkspaceInput, fileWorkspaceOutput } from "./lib/file-workspace-schemas.js";
import {
  type FileWorkspaceSettings,
  readFileWorkspaceSettings,
  resolveFileWorkspaceSettings,
} from "./lib/file-workspace-settings.js";
import { runWorkspaceOperation } from "./lib/run-workspace-operation.js";

export type { FileWorkspaceSettings } from "./lib/file-workspace-settings.js";
export { readFileWorkspaceSettings, resolveFileWorkspaceSettings } from "./lib/file-workspace-settings.js";

/**
 * Creates the `file-workspace` skill: read, write, list, delete and stat files in a workspace
 * folder of the caller's own (`ctx.apiKeyId`), so each owner sees only its files. Paths are checked
 * with `resolveWorkspacePath` (absolute paths, `..`, symlink escapes and sensitive names are
 * refused with `PATH_REFUSED`), sizes are capped (`SIZE_LIMIT_EXCEEDED`) and writes are atomic.
 *
 * With `settings`, those are used (missing fields take the built-in defaults, the environment is
 * not read); without, every call reads `SKILLBOX_WORKSPACE_*` from the environment, so a changed
 * setting applies without a reload. Invalid settings throw `CONFIG_INVALID`.
 *
 * @example
 * const skill = createFileWorkspaceSkill({ root: "/srv/workspaces", maxFileBytes: 4 * 1024 * 1024 });
 */
export function createFileWorkspaceSkill(settings?: Partial<FileWorkspaceSettings>): DefinedSkill {
  const fixedSettings = settings === undefined ? undefined : resolveFileWorkspaceSettings(settings);
  return defineSkill({
    name: "file-workspace",
    description: "Reads, writes, lists and deletes files in a workspace folder of the caller's own",
    timeoutMs: 30_000,
    tags: ["files", "workspace"],
    input: fileWorkspaceInput,
    output: fileWorkspaceOutput,
    handler: async (input, context) => {
      const current = fixedSettings ?? readFileWorkspaceSettings();
      const workspace = await ownerWorkspace(context.apiKeyId, { root: current.root });
      return runWorkspaceOperation(input, { workspace, settings: current, signal: context.signal });
    },
  });
}

/** The skill as the loader registers it: settings come from the environment on every call. */
export default createFileWorkspaceSkill();

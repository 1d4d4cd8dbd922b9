import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type DefinedSkill,
  ownerWorkspaceSegment,
  type SkillExecution,
  type SkillRegistration,
} from "@skillbox/core";
import {
  createTemporaryDirectory,
  createTemporaryHost,
  type TemporaryHost,
} from "@skillbox/test-helpers/temporary-host";
import { createFileWorkspaceSkill, type FileWorkspaceSettings } from "../index.ts";

/** skill.json, as the loader reads it. */
export interface SkillManifest extends Omit<SkillRegistration, "handler"> {
  name: string;
  version: string;
  handler: string;
}

export const manifest = JSON.parse(
  readFileSync(new URL("../skill.json", import.meta.url), "utf8"),
) as SkillManifest;

/** A host with file-workspace registered from its manifest, over a fresh workspace root. */
export interface WorkspaceHost {
  host: TemporaryHost;
  /** The workspace root (a temp folder the host's disposal does not remove; `dispose` does). */
  root: string;
  /** Runs the skill as `owner` (default `alice`). */
  execute(input: unknown, owner?: string): Promise<SkillExecution>;
  /** Absolute path of a file in `owner`'s workspace, for arranging and checking files directly. */
  fileOf(path: string, owner?: string): string;
  dispose(): Promise<void>;
}

/** Registers `skill` (default: a factory-made skill over a temp root with `settings`) the way the loader would. */
export function createWorkspaceHost(
  settings: Partial<FileWorkspaceSettings> = {},
  skill?: (root: string) => DefinedSkill,
): WorkspaceHost {
  const host = createTemporaryHost();
  const root = join(host.directory, "workspaces");
  const defined = skill?.(root) ?? createFileWorkspaceSkill({ root, ...settings });
  host.registry.register({ ...manifest, handler: "plugin-file-workspace", apiKeyId: "system" });
  host.executor.registerHandler("plugin-file-workspace", defined.handler);
  return {
    host,
    root,
    execute: (input, owner = "alice") => host.executor.execute("file-workspace", input, { apiKeyId: owner }),
    fileOf: (path, owner = "alice") => join(root, ownerWorkspaceSegment(owner), path),
    dispose: () => host.dispose(),
  };
}

/** A temp folder outside every workspace, for symlink targets. */
export { createTemporaryDirectory };

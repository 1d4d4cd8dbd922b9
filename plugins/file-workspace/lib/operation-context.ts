import type { FileWorkspaceSettings } from "./file-workspace-settings.js";

/** What every operation gets: the caller's workspace folder, the settings in force and the execution's signal. */
export interface OperationContext {
  /** Absolute path of the caller's workspace (from `ownerWorkspace`). */
  workspace: string;
  settings: FileWorkspaceSettings;
  signal: AbortSignal;
}

import { deleteWorkspaceEntry } from "./delete-workspace-entry.js";
import type { FileWorkspaceInput, FileWorkspaceResult } from "./file-workspace-schemas.js";
import { listWorkspaceFolder } from "./list-workspace-folder.js";
import type { OperationContext } from "./operation-context.js";
import { readWorkspaceFile } from "./read-workspace-file.js";
import { statWorkspaceEntry } from "./stat-workspace-entry.js";
import { writeWorkspaceFile } from "./write-workspace-file.js";

/** Runs the operation the input names against the caller's workspace. */
export function runWorkspaceOperation(
  input: FileWorkspaceInput,
  context: OperationContext,
): Promise<FileWorkspaceResult<FileWorkspaceInput["operation"]>> {
  context.signal.throwIfAborted();
  switch (input.operation) {
    case "read":
      return readWorkspaceFile(input, context);
    case "write":
      return writeWorkspaceFile(input, context);
    case "list":
      return listWorkspaceFolder(input, context);
    case "delete":
      return deleteWorkspaceEntry(input, context);
    case "stat":
      return statWorkspaceEntry(input, context);
  }
}

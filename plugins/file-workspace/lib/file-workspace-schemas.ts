import { z } from "zod";

/** The largest `maxBytes` a caller may ask for; the configured file cap still applies below it. */
const MAX_READ_BYTES = 1024 * 1024 * 1024;
/** The largest `limit` a caller may ask for; the configured list limit still applies below it. */
const MAX_LIST_LIMIT = 100_000;

const relativePath = z
  .string()
  .describe("Path relative to the caller's workspace, with forward slashes; no `..`, no absolute paths");
const filePath = relativePath.min(1);
const encoding = z.enum(["utf8", "base64"]).default("utf8").describe("How `content` is encoded");
const byteCount = z.number().int().min(0);
const modifiedAt = z.string().describe("Last modification time, ISO 8601");
const entryType = z.enum(["file", "directory", "symlink", "other"]);

const readInput = z
  .object({
    operation: z.literal("read"),
    path: filePath,
    encoding,
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_READ_BYTES)
      .optional()
      .describe("Refuse files larger than this (the configured cap applies anyway)"),
  })
  .strict();

const writeInput = z
  .object({
    operation: z.literal("write"),
    path: filePath,
    content: z.string().describe("The text, or the bytes in base64 when `encoding` is base64"),
    encoding,
    append: z.boolean().default(false).describe("Add to the end of the file instead of replacing it"),
    createParents: z.boolean().default(true).describe("Create missing folders on the way"),
  })
  .strict();

const listInput = z
  .object({
    operation: z.literal("list"),
    path: relativePath.default("."),
    recursive: z.boolean().default(false).describe("Also list the contents of sub-folders"),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIST_LIMIT)
      .optional()
      .describe("Most entries to return (the configured limit applies anyway)"),
  })
  .strict();

const deleteInput = z.object({ operation: z.literal("delete"), path: filePath }).strict();

const statInput = z.object({ operation: z.literal("stat"), path: relativePath }).strict();

/** What `file-workspace` accepts: one operation per call, told apart by `operation`. */
export const fileWorkspaceInput = z.discriminatedUnion("operation", [
  readInput,
  writeInput,
  listInput,
  deleteInput,
  statInput,
]);

/** One file or folder in a `list` result. */
export const workspaceEntry = z.object({
  name: z.string(),
  path: z.string().describe("Path relative to the workspace"),
  type: entryType,
  bytes: byteCount.describe("Size of a file; 0 for folders and symlinks"),
  modifiedAt,
});

const readOutput = z.object({
  operation: z.literal("read"),
  path: z.string(),
  encoding: z.enum(["utf8", "base64"]),
  content: z.string(),
  bytes: byteCount,
  modifiedAt,
});

const writeOutput = z.object({
  operation: z.literal("write"),
  path: z.string(),
  bytes: byteCount.describe("Bytes written by this call"),
  size: byteCount.describe("Size of the file afterwards"),
  created: z.boolean().describe("True when the file did not exist before"),
});

const listOutput = z.object({
  operation: z.literal("list"),
  path: z.string(),
  entries: z.array(workspaceEntry),
  truncated: z.boolean().describe("True when more entries exist than were returned"),
});

const deleteOutput = z.object({
  operation: z.literal("delete"),
  path: z.string(),
  type: z.enum(["file", "directory"]),
});

const statOutput = z.object({
  operation: z.literal("stat"),
  path: z.string(),
  type: entryType,
  bytes: byteCount,
  modifiedAt,
});

/** What `file-workspace` returns, with the same `operation` as its input. */
export const fileWorkspaceOutput = z.discriminatedUnion("operation", [
  readOutput,
  writeOutput,
  listOutput,
  deleteOutput,
  statOutput,
]);

/** A validated input, defaults filled in. */
export type FileWorkspaceInput = z.output<typeof fileWorkspaceInput>;
/** One operation's input. */
export type FileWorkspaceRequest<Operation extends FileWorkspaceInput["operation"]> = Extract<
  FileWorkspaceInput,
  { operation: Operation }
>;
/** One operation's output. */
export type FileWorkspaceResult<Operation extends FileWorkspaceInput["operation"]> = Extract<
  z.output<typeof fileWorkspaceOutput>,
  { operation: Operation }
>;
/** One entry of a `list` result. */
export type WorkspaceEntry = z.output<typeof workspaceEntry>;

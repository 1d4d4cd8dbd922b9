import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";

/** Options of {@link ownerWorkspace}. */
export interface OwnerWorkspaceOptions {
  /**
   * The folder holding every owner's workspace. Defaults to `SKILLBOX_WORKSPACE_DIR`, then to
   * `.skillbox/workspaces` under the current directory.
   */
  root?: string;
}

/** Owner ids kept as they are: lowercase so two owners never share a folder on a case-insensitive disk. */
const PLAIN_SEGMENT = /^[a-z0-9_-]{1,64}$/;
/** Names Windows reserves for devices in any folder (`con`, `nul.txt` …). */
const WINDOWS_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;
const SLUG_LENGTH = 40;
const HASH_LENGTH = 16;

/**
 * The folder name of an owner's workspace: collision-free and safe for any owner id.
 *
 * - An id of 1–64 characters from `a-z`, `0-9`, `_` and `-` (and not a Windows device name such as
 *   `con`) is used as it is: `acme` → `acme`.
 * - Any other id (upper case, dots, slashes, `..`, spaces, unicode, empty, very long) becomes a
 *   readable slug plus `~` plus the first 16 hex digits of its SHA-256: `Acme/Prod` →
 *   `Acme-Prod~3f0c…`. `~` never occurs in a kept id, so an encoded name never equals a kept one,
 *   and the hash tells apart ids with the same slug. Upper case is encoded because macOS and Windows
 *   disks would otherwise give `Acme` and `acme` the same folder.
 */
export function ownerWorkspaceSegment(owner: string): string {
  if (PLAIN_SEGMENT.test(owner) && !WINDOWS_DEVICE_NAME.test(owner)) return owner;
  const slug =
    owner
      .replace(/[^A-Za-z0-9_-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, SLUG_LENGTH) || "owner";
  const hash = createHash("sha256").update(owner, "utf8").digest("hex").slice(0, HASH_LENGTH);
  return `${slug}~${hash}`;
}

/** The workspace root in force: the option, then `SKILLBOX_WORKSPACE_DIR`, then `.skillbox/workspaces`. */
function workspaceRoot(options: OwnerWorkspaceOptions = {}): string {
  const fromEnvironment = process.env.SKILLBOX_WORKSPACE_DIR;
  return resolve(options.root ?? (fromEnvironment ? fromEnvironment : ".skillbox/workspaces"));
}

/**
 * Returns the absolute path of `owner`'s workspace folder, `<root>/<segment>`, creating it (and the
 * root) with mode 0700 on first use so other local users cannot read it. The segment is
 * {@link ownerWorkspaceSegment}: `acme` stays `acme`, any id that is not safe as a folder name
 * becomes a slug plus a short hash. Pair it with {@link resolveWorkspacePath} to turn a caller's
 * relative path into a path inside it.
 *
 * @example
 * const workspace = await ownerWorkspace(ctx.apiKeyId);
 * const file = await resolveWorkspacePath(workspace, input.path);
 */
export async function ownerWorkspace(owner: string, options: OwnerWorkspaceOptions = {}): Promise<string> {
  const workspace = resolve(workspaceRoot(options), ownerWorkspaceSegment(owner));
  await mkdir(workspace, { recursive: true, mode: 0o700 });
  return workspace;
}

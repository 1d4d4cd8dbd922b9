import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * Total bytes of the regular files under `folder`, symlinks not followed. It walks the whole tree,
 * which is cheap for the workspace sizes the caps allow; concurrent writes of one owner may each
 * pass the check, so the total cap is a guard against runaway use, not an exact quota.
 */
export async function workspaceUsage(folder: string, signal: AbortSignal): Promise<number> {
  let total = 0;
  const pending = [folder];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    signal.throwIfAborted();
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) total += (await lstat(path).catch(() => undefined))?.size ?? 0;
    }
  }
  return total;
}

import { randomUUID } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";

/** Prefix of the temporary files a write leaves only if the process dies between write and rename. */
const TEMPORARY_FILE_PREFIX = ".skillbox-write-";

/**
 * Writes `data` to `target` atomically: into a temporary file in the same folder (same file system,
 * so `rename` is atomic), flushed to disk, then renamed over the target. Readers see the old file or
 * the new one, never half of it; `rename` also replaces a symlink instead of writing through it.
 */
export async function atomicWriteFile(target: string, data: Buffer, signal: AbortSignal): Promise<void> {
  const temporary = join(dirname(target), `${TEMPORARY_FILE_PREFIX}${randomUUID()}`);
  try {
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(data, { signal });
      await handle.sync();
    } finally {
      await handle.close();
    }
    signal.throwIfAborted();
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

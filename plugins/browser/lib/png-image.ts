import { SkillboxError } from "@skillbox/core/handler";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height of an image in pixels. */
export interface ImageSize {
  width: number;
  height: number;
}

/** True when `buffer` starts with the 8-byte PNG signature. */
export function isPng(buffer: Uint8Array): boolean {
  return buffer.length >= 24 && Buffer.from(buffer.subarray(0, 8)).equals(PNG_SIGNATURE);
}

/**
 * Reads the size from a PNG's IHDR chunk (always the first chunk: width and height as big-endian
 * 32-bit integers at bytes 16 and 20), so the reported size is the image's, not the viewport's.
 */
export function pngSize(buffer: Uint8Array): ImageSize {
  if (!isPng(buffer) || Buffer.from(buffer.subarray(12, 16)).toString("latin1") !== "IHDR") {
    throw new SkillboxError("HANDLER_ERROR", "browser: Chromium returned a screenshot that is not a PNG");
  }
  const view = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}

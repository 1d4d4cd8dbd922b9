import { randomFillSync } from "node:crypto";

const POOL_BYTES = 16 * 512;
const pool = new Uint8Array(POOL_BYTES);
let poolOffset = POOL_BYTES;
const clock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/** Lowercase hex digits as character codes. */
const HEX = Uint8Array.from("0123456789abcdef", (digit) => digit.charCodeAt(0));
/** Where each of the 16 bytes of a UUID starts in its 36-character text. */
const TEXT_OFFSETS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** The text of the id being made: dashes in place, hex digits written over the rest. */
const text = Buffer.from("00000000-0000-0000-0000-000000000000", "latin1");
const bytes = new Uint8Array(16);

/**
 * A new execution id: a UUIDv7, so ids sort by creation time, also within one millisecond
 * (a counter seeded randomly each millisecond, as uuid's own v7 keeps it). The random bytes
 * come from a pool refilled 512 ids at a time: one `randomFillSync` per id costs more than the
 * rest of the id together. The bytes are laid out as uuid's `v7` lays them, and written as text
 * in one go: building the string from 20 pieces allocated more than the rest of an execution.
 * `now` is the creation time when the caller read the clock already.
 */
export function createExecutionId(now: number = Date.now()): string {
  if (poolOffset === POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const random = poolOffset;
  poolOffset += 16;
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq =
      (pool[random + 6]! << 23) | (pool[random + 7]! << 16) | (pool[random + 8]! << 8) | pool[random + 9]!;
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs++;
  }
  const { msecs, seq } = clock;
  bytes[0] = (msecs / 0x10000000000) & 0xff;
  bytes[1] = (msecs / 0x100000000) & 0xff;
  bytes[2] = (msecs / 0x1000000) & 0xff;
  bytes[3] = (msecs / 0x10000) & 0xff;
  bytes[4] = (msecs / 0x100) & 0xff;
  bytes[5] = msecs & 0xff;
  bytes[6] = 0x70 | ((seq >>> 28) & 0x0f);
  bytes[7] = (seq >>> 20) & 0xff;
  bytes[8] = 0x80 | ((seq >>> 14) & 0x3f);
  bytes[9] = (seq >>> 6) & 0xff;
  bytes[10] = ((seq << 2) & 0xff) | (pool[random + 10]! & 0x03);
  for (let index = 11; index < 16; index++) bytes[index] = pool[random + index]!;
  for (let index = 0; index < 16; index++) {
    const byte = bytes[index]!;
    const at = TEXT_OFFSETS[index]!;
    text[at] = HEX[byte >>> 4]!;
    text[at + 1] = HEX[byte & 0x0f]!;
  }
  return text.toString("latin1", 0, 36);
}

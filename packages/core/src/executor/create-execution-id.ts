import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

const POOL_BYTES = 16 * 512;
const pool = new Uint8Array(POOL_BYTES);
let poolOffset = POOL_BYTES;
const clock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/**
 * A new execution id: a UUIDv7, so ids sort by creation time, also within one millisecond
 * (a counter seeded randomly each millisecond, as uuid's own v7 keeps it). The random bytes
 * come from a pool refilled 512 ids at a time: one `randomFillSync` per id costs more than the
 * rest of the id together.
 */
export function createExecutionId(): string {
  if (poolOffset === POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const random = pool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq = (random[6]! << 23) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs++;
  }
  return v7({ random, msecs: clock.msecs, seq: clock.seq });
}

import { randomFillSync } from "node:crypto";

/** The ids an OpenTelemetry SDK's `idGenerator` hands out (the SDK's `IdGenerator` interface). */
export interface SkillboxIdGenerator {
  /** A random 32-hex-digit trace id, or the one core asks for while it replays a relayed span. */
  generateTraceId(): string;
  /** A random 16-hex-digit span id, or the one core asks for while it replays a relayed span. */
  generateSpanId(): string;
}

/** The ids core wants the next span to get; read and cleared by the generator. */
interface IdHint {
  traceId: string | undefined;
  spanId: string | undefined;
}

/**
 * On a `Symbol.for` global, not in this module: an application may load two copies of core (its
 * own and a plugin's), and the generator the SDK was given must see the hints of either.
 */
const HINT_KEY = Symbol.for("skillbox.telemetry.id-hint");

function hintSlot(): IdHint {
  const global = globalThis as { [HINT_KEY]?: IdHint };
  let slot = global[HINT_KEY];
  if (slot === undefined) {
    slot = { traceId: undefined, spanId: undefined };
    global[HINT_KEY] = slot;
  }
  return slot;
}

/**
 * The id generator to give the OpenTelemetry SDK (`new NodeSDK({ idGenerator })`,
 * `new BasicTracerProvider({ idGenerator })`) of a host that runs worker or container skills:
 * random ids, except while core replays a span made in a worker thread or a sandbox, which then
 * keeps the id it had there. A nested `ctx.call`'s parent and a `traceparent` a handler sent on
 * name that id, so with this generator they point at a span the backend has. Without it the
 * relayed spans still form the right tree, under new ids.
 */
export function createSkillboxIdGenerator(): SkillboxIdGenerator {
  const slot = hintSlot();
  return {
    generateTraceId() {
      const hinted = slot.traceId;
      if (hinted === undefined) return randomTraceId();
      slot.traceId = undefined;
      return hinted;
    },
    generateSpanId() {
      const hinted = slot.spanId;
      if (hinted === undefined) return randomSpanId();
      slot.spanId = undefined;
      return hinted;
    },
  };
}

/**
 * Runs `start` (a synchronous `tracer.startSpan`) with `ids` as the hint, so a span started by a
 * {@link createSkillboxIdGenerator} SDK gets them; the hint never outlives the call.
 */
export function withIdHint<T>(ids: { traceId?: string; spanId: string }, start: () => T): T {
  const slot = hintSlot();
  slot.traceId = ids.traceId;
  slot.spanId = ids.spanId;
  try {
    return start();
  } finally {
    slot.traceId = undefined;
    slot.spanId = undefined;
  }
}

/**
 * Random bytes drawn from the CSPRNG a pool at a time: one `randomFillSync` per id was a third of
 * the executor's CPU with an SDK installed (four ids an execution).
 */
const POOL_BYTES = 4_096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** Random hex of `bytes` bytes, never all zeros (the W3C "invalid" id). */
function randomHex(bytes: 8 | 16): string {
  for (;;) {
    if (poolOffset + bytes > POOL_BYTES) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const start = poolOffset;
    poolOffset += bytes;
    for (let index = start; index < poolOffset; index++) {
      if (pool[index] !== 0) return pool.toString("hex", start, poolOffset);
    }
  }
}

/** A random W3C trace id: 32 lowercase hex digits, not all zero. */
export function randomTraceId(): string {
  return randomHex(16);
}

/** A random W3C span id: 16 lowercase hex digits, not all zero. */
export function randomSpanId(): string {
  return randomHex(8);
}

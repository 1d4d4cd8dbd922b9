import { MessageChannel } from "node:worker_threads";
import { isSkillboxError, SkillboxError } from "@skillbox/core";
import { serializeError as workerSerializeError } from "@skillbox/core/handler-module";
import { reviveError, type SerializedError } from "@skillbox/core/internal";
import { describe, expect, it } from "vitest";
import { serializeError } from "../../src/errors/serialize-error.js";

/** `value` after a trip through a real MessagePort, as worker threads send it. */
async function throughPort<T>(value: T): Promise<T> {
  const { port1, port2 } = new MessageChannel();
  try {
    const received = new Promise<T>((resolve) => port2.once("message", resolve));
    port1.postMessage(value);
    return await received;
  } finally {
    port1.close();
    port2.close();
  }
}

/** `value` after a trip through JSON, as a container sandbox prints its result line. */
function throughJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

describe("errors across a thread or process boundary", () => {
  it("brings a SkillboxError back as one, with its code, message, data, retryable and stack", async () => {
    const original = new SkillboxError("RATE_LIMITED", "slow down", {
      data: { retryAfterMs: 50, nested: [1, { ok: true }] },
      retryable: false,
    });
    const sent = serializeError(original);

    for (const arrived of [await throughPort(sent), throughJson(sent)]) {
      const revived = reviveError(arrived);
      expect(revived).toBeInstanceOf(SkillboxError);
      expect(isSkillboxError(revived)).toBe(true);
      expect(revived).toMatchObject({
        name: "SkillboxError",
        code: "RATE_LIMITED",
        message: "slow down",
        data: { retryAfterMs: 50, nested: [1, { ok: true }] },
        retryable: false,
      });
      expect(revived.stack).toBe(original.stack);
    }
  });

  it("leaves retryable to the code's default when the error did not set it", () => {
    const revived = reviveError(serializeError(new SkillboxError("TIMEOUT", "too slow")));
    expect((revived as SkillboxError).retryable).toBe(new SkillboxError("TIMEOUT", "x").retryable);
    const handlerCode = reviveError({ name: "SkillboxError", code: "OUT_OF_STOCK", message: "none left" });
    expect((handlerCode as SkillboxError).retryable).toBe(true);
  });

  it("brings a plain error back with its name and code, not as a SkillboxError", async () => {
    const original = Object.assign(new TypeError("connect refused"), { code: "ECONNREFUSED" });
    const revived = reviveError(await throughPort(serializeError(original)));
    expect(isSkillboxError(revived)).toBe(false);
    expect(revived).toMatchObject({ name: "TypeError", code: "ECONNREFUSED", message: "connect refused" });
    expect(revived.stack).toBe(original.stack);
  });

  it("leaves out fields that are not plain data, so the message still crosses", async () => {
    const odd = Object.assign(new Error("odd error of mine"), {
      code: () => 1,
      retryable: Symbol("no"),
      data: { format: () => "a function" },
    });
    const sent = serializeError(odd);
    expect(sent).toMatchObject({ name: "Error", message: "odd error of mine" });
    expect(sent.code).toBeUndefined();
    expect(sent.retryable).toBeUndefined();
    expect(sent.data).toBeUndefined();
    const arrived = await throughPort(sent);
    expect(reviveError(arrived).message).toBe("odd error of mine");
  });

  it("keeps the text of something thrown that is not an Error", () => {
    expect(serializeError("plain text")).toEqual({ name: "Error", message: "plain text" });
    expect(serializeError(undefined)).toEqual({ name: "Error", message: "undefined" });
    const revived = reviveError(serializeError(42));
    expect(revived).toBeInstanceOf(Error);
    expect(revived.message).toBe("42");
  });

  it("is the serialiser worker threads and container sandboxes send with", () => {
    const original = new SkillboxError("HANDLER_INVALID", "index.ts: failed to load", {
      data: { file: "index.ts" },
      retryable: false,
    });
    const plain = Object.assign(new RangeError("out of range"), { code: 7 });
    for (const error of [original, plain, "text"]) {
      expect(workerSerializeError(error)).toEqual(serializeError(error) satisfies SerializedError);
    }
  });
});

import { queueRedisOptions } from "@skillbox/distributed";
import { describe, expect, it } from "vitest";

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toMatchObject({ code: "CONFIG_INVALID" });
    return (error as Error).message;
  }
  throw new Error("expected CONFIG_INVALID");
}

describe("queue URL errors", () => {
  it("do not echo a URL that does not parse (its password cannot be found reliably)", () => {
    // The unescaped "/" ends the authority at "admin:hun", so the URL has no valid port.
    const message = messageOf(() =>
      queueRedisOptions("redis://admin:hun/ter2@127.0.0.1:6379", { role: "worker" }),
    );
    expect(message).toContain("it is not a URL");
    expect(message).not.toContain("hun");
    expect(message).not.toContain("ter2");
  });

  it("redact a password query parameter of a URL that parses", () => {
    const message = messageOf(() =>
      queueRedisOptions("http://127.0.0.1/?password=hunter2", { role: "producer" }),
    );
    expect(message).toContain("scheme");
    expect(message).not.toContain("hunter2");
  });
});

import { describe, expect, it } from "vitest";
import { checkPostgresUrl, checkQueueUrl } from "../src/config/deployment-urls.js";

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toMatchObject({ code: "CONFIG_INVALID" });
    return (error as Error).message;
  }
  throw new Error("expected CONFIG_INVALID");
}

describe("deployment URL errors", () => {
  it("do not echo a database URL that does not parse", () => {
    const message = messageOf(() => checkPostgresUrl("postgres://app:pa/ss@db:5432/x", "--db"));
    expect(message).toContain("--db");
    expect(message).toContain("it is not a URL");
    expect(message).not.toContain("pa/ss");
    expect(message).not.toContain("ss@db");
  });

  it("do not echo a queue URL that does not parse", () => {
    const message = messageOf(() => checkQueueUrl("redis://admin:hun/ter2@127.0.0.1:6379", "SKILLBOX_QUEUE"));
    expect(message).toContain("SKILLBOX_QUEUE");
    expect(message).not.toContain("ter2");
  });

  it("redact the password of a queue URL that parses but is wrong", () => {
    const message = messageOf(() => checkQueueUrl("redis://admin:hunter2@127.0.0.1/queue", "--queue"));
    expect(message).toContain('got "redis://admin:***@127.0.0.1/queue"');
    expect(message).not.toContain("hunter2");
  });
});

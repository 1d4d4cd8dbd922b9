import { MessageChannel } from "node:worker_threads";
import { createSkillHost, type SkillHost, type SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

function skill(overrides: Partial<SkillRegistration> = {}): SkillRegistration {
  return { name: "x", version: "1.0.0", handler: "x-handler", ...overrides };
}

let host: TemporaryHost;
let second: SkillHost;

beforeEach(() => {
  host = createTemporaryHost();
  // Its own connection to the same file, as another process would have.
  second = createSkillHost({
    database: host.databasePath,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
});

afterEach(async () => {
  await second.close();
  await host.dispose();
});

describe("SkillRegistry freshness", () => {
  it("sees another connection's write in an I/O callback that follows a lookup made in an immediate", async () => {
    host.registry.register(skill({ version: "1.0.0" }));
    const channel = new MessageChannel();
    try {
      const seenInMessage = new Promise<string | undefined>((resolve) => {
        channel.port2.on("message", () => resolve(host.registry.resolveVersion("x")?.version));
      });
      const seenInImmediate = new Promise<string | undefined>((resolve) => {
        setImmediate(() => {
          // A lookup in the event loop's check phase, where executions resumed by a group commit run.
          const version = host.registry.resolveVersion("x")?.version;
          // Another writer commits, then says so; the message is handled in the next turn's poll
          // phase, before any immediate queued now runs.
          second.registry.register(skill({ version: "2.0.0" }));
          channel.port1.postMessage("registered");
          resolve(version);
        });
      });

      expect(await seenInImmediate).toBe("1.0.0");
      expect(await seenInMessage).toBe("2.0.0");
    } finally {
      channel.port1.close();
    }
  });

  it("shares one freshness check among the lookups of one synchronous run", () => {
    host.registry.register(skill({ version: "1.0.0" }));
    expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");

    second.registry.register(skill({ version: "2.0.0" }));

    // Within the same run the answer already given stands, as it did before the write.
    expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
    expect(host.registry.getSkill("x")?.version).toBe("1.0.0");
  });
});

import { describe, expect, it } from "vitest";
import { useTemporaryHosts } from "./executor-test-bed.js";

const newTemporaryHost = useTemporaryHosts();

function newHost() {
  const host = newTemporaryHost();
  host.executor.registerHandler("other", () => ({}));
  host.registry.register({ name: "other", version: "1.0.0", handler: "other" });
  return host;
}

describe("SkillExecutor.listExecutions: until", () => {
  it("lists the executions created before `until`, with `since` the range [since, until)", async () => {
    const host = newHost();
    await host.executor.execute("other", {});
    const [first] = await host.executor.listExecutions();
    const firstAt = Date.parse(first!.createdAt);
    // The next execution is created in a later millisecond than the first.
    while (Date.now() <= firstAt) await new Promise((resolve) => setTimeout(resolve, 1));
    await host.executor.execute("other", {});
    const [second] = await host.executor.listExecutions();
    const secondAt = Date.parse(second!.createdAt);

    expect(
      (await host.executor.listExecutions({ until: secondAt })).map((execution) => execution.id),
    ).toEqual([first!.id]);
    expect(await host.executor.countExecutions({ since: firstAt, until: secondAt + 1 })).toBe(2);
    expect(await host.executor.countExecutions({ since: secondAt, until: secondAt })).toBe(0);
    expect(
      (await host.executor.listExecutionSummaries({ until: firstAt + 1 })).map((summary) => summary.id),
    ).toEqual([first!.id]);
    await expect(host.executor.listExecutions({ until: "later" })).rejects.toThrow(/`until` must be a date/);
  });
});

import { defineInterceptor, type SkillHost } from "@skillbox/core";
import { findOverDeepPath } from "@skillbox/core/internal";
import { describe, expect, it } from "vitest";
import { useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

/** `{"a":{"a":…1…}}` with `levels` objects, parsed from text as a body would be. */
function nested(levels: number): unknown {
  let text = "1";
  for (let level = 0; level < levels; level++) text = `{"a":${text}}`;
  return JSON.parse(text);
}

/** A skill accepting anything, whose handler counts its runs. */
function registerAny(host: SkillHost): { runs: number } {
  const counter = { runs: 0 };
  host.registry.register({ name: "any", version: "1.0.0", handler: "any", apiKeyId: "public" });
  host.executor.registerHandler("any", () => {
    counter.runs++;
    return { ok: true };
  });
  return counter;
}

describe("SkillExecutor: nesting depth", () => {
  it("refuses input nested 10,000 deep with INPUT_INVALID before the handler runs, naming limit and path", async () => {
    const host = newHost();
    const counter = registerAny(host);

    const execution = await host.executor.execute("any", nested(10_000));

    expect(counter.runs).toBe(0);
    expect(execution.status).toBe("error");
    expect(execution.attempts).toBe(0);
    expect(execution.error?.code).toBe("INPUT_INVALID");
    expect(execution.error?.message).toContain("100 levels");
    expect(execution.error?.message).toContain("input.a.a");
    expect(execution.error?.data).toMatchObject({ maxDepth: 100 });
    // The row records the refusal without storing the over-deep value itself.
    const stored = await host.executor.getExecution(execution.id);
    expect(stored).toMatchObject({ status: "error", error: { code: "INPUT_INVALID" } });
    expect(typeof stored?.input).toBe("string");
    expect(JSON.stringify(stored).length).toBeLessThan(4_000);
  });

  it("runs input exactly at the limit and refuses one level more (the limit is configurable)", async () => {
    const host = newHost({ maxNestingDepth: 8 });
    const counter = registerAny(host);

    expect((await host.executor.execute("any", nested(8))).status).toBe("success");
    const refused = await host.executor.execute("any", nested(9));

    expect(refused.error?.code).toBe("INPUT_INVALID");
    expect(refused.error?.message).toContain("8 levels");
    expect(counter.runs).toBe(1);
  });

  it("fails an output nested deeper than the limit with OUTPUT_INVALID instead of storing it", async () => {
    const host = newHost();
    host.registry.register({ name: "deep-out", version: "1.0.0", handler: "deep-out", apiKeyId: "public" });
    host.executor.registerHandler("deep-out", () => nested(5_000));

    const execution = await host.executor.execute("deep-out", {});

    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("OUTPUT_INVALID");
    expect(execution.error?.message).toContain("100 levels");
    expect((await host.executor.getExecution(execution.id))?.output).toBeNull();
  });

  it("fails an over-deep output with OUTPUT_INVALID before a recursive output schema or after hook walks it", async () => {
    const host = newHost();
    const tree = {
      $ref: "#/definitions/node",
      definitions: { node: { type: "object", additionalProperties: { $ref: "#/definitions/node" } } },
    };
    host.registry.register({
      name: "deep-tree",
      version: "1.0.0",
      handler: "deep-tree",
      apiKeyId: "public",
      schema: { output: tree },
    });
    host.executor.registerHandler("deep-tree", () => nested(100_000));
    const walked: string[] = [];
    host.executor.use(
      defineInterceptor({
        name: "walks-output",
        after: (_context, result) => {
          // Recursive, as an interceptor copying or redacting an output would be.
          const depth = (value: unknown): number =>
            typeof value === "object" && value !== null
              ? 1 + Math.max(0, ...Object.values(value).map(depth))
              : 0;
          walked.push(String(depth(result.output)));
          return undefined;
        },
      }),
    );

    const execution = await host.executor.execute("deep-tree", {});

    expect(execution.error?.code).toBe("OUTPUT_INVALID");
    expect(execution.error?.message).toContain("output.a.a");
    expect(walked).toEqual([]);
  });
});

describe("findOverDeepPath", () => {
  it("names the first over-deep path, with array indices and quoted odd keys", () => {
    expect(findOverDeepPath({ list: [{ "odd key": { a: {} } }] }, 4)).toBe('input.list[0]["odd key"].a');
    expect(findOverDeepPath({ list: [{ "odd key": { a: {} } }] }, 5)).toBeUndefined();
    expect(findOverDeepPath("scalar", 0)).toBeUndefined();
  });

  it("walks a shared subtree once per level, not once per path (2^60 paths here)", () => {
    let node: Record<string, unknown> = {};
    for (let level = 0; level < 60; level++) node = { left: node, right: node };
    expect(findOverDeepPath(node, 100)).toBeUndefined();
    expect(findOverDeepPath(node, 30)).toMatch(/^input\.(left|right)/);
  });

  it("ends on a cycle (only in-process callers can send one; the row then stores a note)", () => {
    const looped: Record<string, unknown> = {};
    looped.self = looped;
    expect(findOverDeepPath(looped, 10)).toBeUndefined();
  });
});

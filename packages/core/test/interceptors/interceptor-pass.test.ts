import { describe, expect, it } from "vitest";
import { SkillboxError } from "../../src/errors/skillbox-error.js";
import type { Interceptor, InterceptorContext } from "../../src/interceptors/define-interceptor.js";
import { InterceptorChain } from "../../src/interceptors/interceptor-chain.js";
import type { InterceptorPass } from "../../src/interceptors/interceptor-pass.js";
import type { Skill } from "../../src/types.js";

const skill = {
  id: "00000000-0000-7000-8000-000000000001",
  name: "onion",
  version: "1.0.0",
  contentHash: "hash",
  tags: [],
} as unknown as Skill;

function contextFor(input: unknown): InterceptorContext {
  return {
    skill,
    input,
    executionId: "execution",
    parentExecutionId: null,
    apiKeyId: "public",
    sessionId: null,
    state: {},
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    approval: null,
    requireApproval() {},
  };
}

/** Three layers (outer, middle, inner) that log every hook they run; `override` replaces hooks. */
function openPass(log: string[], override: Record<string, Partial<Interceptor>> = {}): InterceptorPass {
  const chain = new InterceptorChain();
  ["outer", "middle", "inner"].forEach((name, order) => {
    chain.use({
      name,
      order,
      before: () => void log.push(`before ${name}`),
      after: () => void log.push(`after ${name}`),
      onError: () => void log.push(`onError ${name}`),
      ...override[name],
    });
  });
  return chain.open(skill, contextFor({}), () => {});
}

const progress = { attempts: 1, startedAt: 0 };

describe("InterceptorPass", () => {
  it("runs synchronous hooks without a promise, in onion order", () => {
    const log: string[] = [];
    const pass = openPass(log);
    const before = pass.before();
    expect(before).toEqual({ shortCircuited: false });
    const output = pass.after("output", progress);
    expect(output).toBe("output");
    expect(log).toEqual([
      "before outer",
      "before middle",
      "before inner",
      "after inner",
      "after middle",
      "after outer",
    ]);
  });

  it("after `after` of a layer throws, runs `onError` of every entered layer, innermost first", async () => {
    const log: string[] = [];
    const pass = openPass(log, {
      middle: {
        after: () => {
          log.push("after middle");
          throw new Error("broken after");
        },
      },
    });
    pass.before();
    let thrown: unknown;
    try {
      pass.after("output", progress);
    } catch (error) {
      thrown = error;
    }
    expect((thrown as SkillboxError).code).toBe("INTERCEPTOR_FAILED");
    const recovery = await pass.onError(thrown as SkillboxError);
    expect(recovery).toEqual({ recovered: false, error: thrown });
    expect(log.slice(3)).toEqual([
      "after inner",
      "after middle",
      "onError inner",
      "onError middle",
      "onError outer",
    ]);
  });

  it("unwinds only through the layers `before` reached when one throws", async () => {
    const log: string[] = [];
    const pass = openPass(log, {
      middle: {
        before: () => {
          log.push("before middle");
          throw new SkillboxError("DENIED", "no");
        },
      },
    });
    let thrown: unknown;
    try {
      pass.before();
    } catch (error) {
      thrown = error;
    }
    expect((thrown as SkillboxError).code).toBe("DENIED");
    await pass.onError(thrown as SkillboxError);
    expect(log).toEqual(["before outer", "before middle", "onError middle", "onError outer"]);
  });

  it("returns to the outer layers only after a layer answers in `before`", async () => {
    const log: string[] = [];
    const pass = openPass(log, {
      middle: {
        before: () => {
          log.push("before middle");
          return { output: "cached" };
        },
      },
    });
    expect(await pass.before()).toEqual({ shortCircuited: true, output: "cached" });
    expect(pass.after("cached", progress)).toBe("cached");
    expect(log).toEqual(["before outer", "before middle", "after middle", "after outer"]);
  });

  it("waits for an asynchronous hook and goes on where it left off", async () => {
    const log: string[] = [];
    const pass = openPass(log, {
      middle: {
        before: async () => {
          log.push("before middle");
          return { input: "rewritten" };
        },
      },
    });
    const before = pass.before();
    expect(before).toBeInstanceOf(Promise);
    expect(await before).toEqual({ shortCircuited: false });
    expect(log).toEqual(["before outer", "before middle", "before inner"]);
  });

  it("opens one shared empty pass for a skill no interceptor applies to", () => {
    const chain = new InterceptorChain();
    chain.use({ name: "elsewhere", match: { names: "other.*" }, audit: () => ({ input: "redacted" }) });
    const first = chain.open(skill, contextFor({}), () => {});
    expect(chain.open(skill, contextFor({}), () => {})).toBe(first);
    expect(first.audit("input", "raw")).toBe("raw");
    expect(first.after("output", progress)).toBe("output");
  });
});

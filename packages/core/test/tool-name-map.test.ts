import { createToolNameMap, TOOL_NAME_PATTERN, type ToolReference } from "@skillbox/core";
import { describe, expect, it } from "vitest";

/** What every provider accepts (OpenAI, Anthropic, Gemini), plus Gemini's first character. */
const PROVIDER_SAFE = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

function namesOf(references: ToolReference[]): Record<string, string> {
  const map = createToolNameMap(references);
  return Object.fromEntries(
    map.entries.map(({ reference, toolName }) => [
      reference.version === undefined ? reference.name : `${reference.name}@${reference.version}`,
      toolName,
    ]),
  );
}

describe("createToolNameMap", () => {
  it.each([
    ["echo", undefined, "echo"],
    ["get_weather-v2", undefined, "get_weather-v2"],
    ["github.issues", undefined, "github_issues"],
    ["@acme/weather", undefined, "acme__weather"],
    ["@my.scope/a.b", undefined, "my_scope__a_b"],
    ["echo", "1.0.0", "echo_v1_0_0"],
    ["@acme/weather", "2.0.0-rc.1", "acme__weather_v2_0_0-rc_1"],
    ["beta-only", "1.0.0+build.7", "beta-only_v1_0_0_build_7"],
    ["3d.render", undefined, "_3d_render"],
  ])("names %s@%s %s when it is alone, and reads it back", (name, version, toolName) => {
    const reference = version === undefined ? { name } : { name, version };
    const map = createToolNameMap([reference]);
    expect(map.toolName(reference)).toBe(toolName);
    expect(toolName).toMatch(PROVIDER_SAFE);
    expect(map.reference(toolName)).toEqual(reference);
  });

  it("replaces every character outside [a-zA-Z0-9_-] and keeps names provider-safe", () => {
    const references = [
      { name: "a.b.c" },
      { name: "wetter.über" },
      { name: "-dash" },
      { name: "x".repeat(90) },
      { name: `${"y".repeat(70)}`, version: "10.20.30-alpha.1" },
    ];
    const map = createToolNameMap(references);
    for (const reference of references) {
      const toolName = map.toolName(reference) as string;
      expect(toolName).toMatch(PROVIDER_SAFE);
      expect(toolName).toMatch(TOOL_NAME_PATTERN);
      expect(map.reference(toolName)).toEqual(reference);
    }
    expect(map.toolName({ name: "wetter.über" })).toBe("wetter__ber");
    expect(map.toolName({ name: "-dash" })).toBe("_-dash");
    expect(map.toolName({ name: "x".repeat(90) })).toBe("x".repeat(64));
    // A pinned name that is too long is cut in its name, never in its version.
    expect(map.toolName({ name: "y".repeat(70), version: "10.20.30-alpha.1" })).toMatch(
      /^y+_v10_20_30-alpha_1$/,
    );
  });

  it("suffixes only a real collision: the skill already named so keeps the name, in any order", () => {
    const forward = namesOf([{ name: "a.b" }, { name: "a_b" }, { name: "other" }]);
    const backward = namesOf([{ name: "other" }, { name: "a_b" }, { name: "a.b" }]);
    expect(forward).toEqual({ "a.b": "a_b_2", a_b: "a_b", other: "other" });
    expect(backward).toEqual(forward);
    const map = createToolNameMap([{ name: "a_b" }, { name: "a.b" }]);
    expect(map.reference("a_b")).toEqual({ name: "a_b" });
    expect(map.reference("a_b_2")).toEqual({ name: "a.b" });
  });

  it("orders colliding names by UTF-16 order and skips suffixes another tool already has", () => {
    const names = namesOf([
      { name: "a-b.c" },
      { name: "a-b_c_2" },
      { name: "a-b.c".replace(".", "_") },
      { name: "@a-b/c" },
    ]);
    // `a-b_c` is exact and keeps its name; `@a-b/c` is `a-b__c`, no collision; `a-b.c` collides
    // with `a-b_c` and `a-b_c_2` is taken, so it gets `_3`.
    expect(names).toEqual({ "a-b.c": "a-b_c_3", "a-b_c": "a-b_c", "a-b_c_2": "a-b_c_2", "@a-b/c": "a-b__c" });
    const unscoped = namesOf([{ name: "@acme/weather" }, { name: "acme__weather" }]);
    expect(unscoped).toEqual({ "@acme/weather": "acme__weather_2", acme__weather: "acme__weather" });
    const dotted = namesOf([{ name: "x.y" }, { name: "x/y" }]);
    // Neither is exact: the first by UTF-16 order (`.` before `/`) keeps the name.
    expect(dotted).toEqual({ "x.y": "x_y", "x/y": "x_y_2" });
  });

  it("keeps a suffixed long name within 64 characters", () => {
    const stem = "z".repeat(70);
    const map = createToolNameMap([{ name: `${stem}a` }, { name: `${stem}b` }]);
    expect(map.toolName({ name: `${stem}a` })).toBe("z".repeat(64));
    expect(map.toolName({ name: `${stem}b` })).toBe(`${"z".repeat(62)}_2`);
    expect(map.reference(`${"z".repeat(62)}_2`)).toEqual({ name: `${stem}b` });
  });

  it("counts a reference given twice once, and reads no name outside the set", () => {
    const map = createToolNameMap([{ name: "echo" }, { name: "echo" }]);
    expect(map.entries).toHaveLength(1);
    expect(map.reference("get_time")).toBeUndefined();
    expect(map.reference("echo_2")).toBeUndefined();
    expect(map.reference("")).toBeUndefined();
    expect(map.toolName({ name: "missing" })).toBeUndefined();
  });
});

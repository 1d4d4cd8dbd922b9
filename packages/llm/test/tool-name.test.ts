import { decodeToolName, encodeToolName } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

describe("encodeToolName", () => {
  it.each([
    ["echo", undefined, "skillbox_echo"],
    ["echo", "1.0.0", "skillbox_echo_v1_0_0"],
    ["@acme/weather", undefined, "skillbox_acme_sweather"],
    ["@acme/weather", "2.0.0-rc.1", "skillbox_acme_sweather_v2_0_0-rc_1"],
    ["github.issues", undefined, "skillbox_github_dissues"],
    ["get_time", undefined, "skillbox_get__time"],
    ["beta-only", "1.0.0+build.7", "skillbox_beta-only_v1_0_0__build_7"],
  ])("writes %s@%s as %s", (name, version, toolName) => {
    expect(encodeToolName(name, version)).toBe(toolName);
    expect(decodeToolName(toolName)).toEqual(version === undefined ? { name } : { name, version });
  });

  it.each([
    ["a_v1", undefined],
    ["a__b", "1.2.3"],
    ["x_d", "0.0.1-alpha-1.beta"],
    ["@my.scope/tool_s_v", "10.20.30+meta-data.1"],
    ["@s/a.b.c", "1.0.0-0"],
    ["a_", undefined],
  ])("round-trips the tricky name %s@%s", (name, version) => {
    const toolName = encodeToolName(name, version);
    expect(toolName).toMatch(TOOL_NAME_PATTERN);
    expect(decodeToolName(toolName)).toEqual(version === undefined ? { name } : { name, version });
  });

  it("keeps a long scoped name within 64 characters and reads it back through the skills", () => {
    const name = `@a-very-long-organisation-scope/${"weather-forecast-".repeat(5)}tool`;
    const skills = [
      { name: "echo", version: "1.0.0" },
      { name, version: "3.1.4" },
    ];
    const unpinned = encodeToolName(name);
    const pinned = encodeToolName(name, "3.1.4");
    for (const toolName of [unpinned, pinned]) {
      expect(toolName).toMatch(TOOL_NAME_PATTERN);
      expect(toolName).toHaveLength(64);
      expect(toolName).toMatch(/_h[0-9a-f]{8}$/);
    }
    expect(unpinned).not.toBe(pinned);
    expect(decodeToolName(unpinned)).toBeUndefined();
    expect(decodeToolName(unpinned, skills)).toEqual({ name });
    expect(decodeToolName(pinned, skills)).toEqual({ name, version: "3.1.4" });
    expect(decodeToolName(pinned, [{ name: "echo", version: "1.0.0" }])).toBeUndefined();
  });

  it("gives two long names with the same beginning different tool names", () => {
    const stem = "x".repeat(70);
    expect(encodeToolName(`${stem}a`)).not.toBe(encodeToolName(`${stem}b`));
  });

  it("never cuts a hashed name inside an escape, so it cannot read as another skill", () => {
    // 54 characters of prefix room: the cut lands right after a `_` that is escaped as `__`.
    for (let length = 40; length < 60; length++) {
      const toolName = encodeToolName(`${"a".repeat(length)}_${"b".repeat(30)}`);
      expect(toolName.length).toBeLessThanOrEqual(64);
      expect(decodeToolName(toolName)).toBeUndefined();
    }
  });
});

describe("decodeToolName", () => {
  it.each([
    "get_weather",
    "echo",
    "skillbox_",
    "skillbox_echo_x",
    "skillbox_echo_v1_0",
    "skillbox_echo_v01_0_0",
    "skillbox_a_sb_sc",
    "skillbox_echo_h1234abcd",
    "skillbox_.echo",
    "skillbox_-echo",
    `skillbox_${"a".repeat(60)}`,
    "",
  ])("returns undefined for the foreign or malformed name %j", (toolName) => {
    expect(decodeToolName(toolName)).toBeUndefined();
  });
});

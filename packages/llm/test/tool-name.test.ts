import { createToolNameMap } from "@skillbox/core";
import { toolNameMap } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

const SKILLS = [
  { name: "echo", version: "2.0.0" },
  { name: "echo", version: "1.0.0" },
  { name: "github.issues", version: "1.0.0" },
  { name: "@acme/weather", version: "2.0.0-rc.1" },
];

describe("toolNameMap", () => {
  it("names each skill once, as core's shared scheme (and so MCP) names it", () => {
    const names = toolNameMap(SKILLS);
    expect(names.entries.map((entry) => entry.toolName)).toEqual(["acme__weather", "echo", "github_issues"]);
    const shared = createToolNameMap(SKILLS.map((skill) => ({ name: skill.name })));
    expect(names.entries).toEqual(shared.entries);
    expect(names.reference("github_issues")).toEqual({ name: "github.issues" });
    expect(names.reference("get_time")).toBeUndefined();
  });

  it("names each version with pinVersions and reads the version back", () => {
    const names = toolNameMap(SKILLS, { pinVersions: true });
    expect(names.entries.map((entry) => entry.toolName)).toEqual([
      "acme__weather_v2_0_0-rc_1",
      "echo_v1_0_0",
      "echo_v2_0_0",
      "github_issues_v1_0_0",
    ]);
    expect(names.reference("acme__weather_v2_0_0-rc_1")).toEqual({
      name: "@acme/weather",
      version: "2.0.0-rc.1",
    });
    expect(names.reference("echo")).toBeUndefined();
  });
});

import { writeFileSync } from "node:fs";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractSamples } from "./markdown-samples.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
});

afterEach(() => tree.cleanup());

function samplesOf(markdown: string) {
  const file = tree.path("README.md");
  writeFileSync(file, markdown);
  return extractSamples(file, "README.md");
}

const fence = "```";

describe("extractSamples", () => {
  it("reads each fence's kind, line and code, and leaves unmarked code to run and shell unmarked", () => {
    const samples = samplesOf(
      `# Title\n\n${fence}ts\nconst a = 1;\n${fence}\n\n${fence}sh\necho hi\n${fence}\n\n${fence}json\n{}\n${fence}\n\n${fence}\nplugins/\n${fence}\n`,
    );
    expect(samples.map((sample) => [sample.kind, sample.line, sample.mode])).toEqual([
      ["code", 3, undefined],
      ["shell", 7, undefined],
      ["json", 11, "parse"],
      ["text", 15, undefined],
    ]);
    expect(samples[0]?.code).toBe("const a = 1;\n");
  });

  it("reads the marker right before a fence: its directive, reason, hidden lines and host environment", () => {
    const samples = samplesOf(
      [
        "<!-- sample: typecheck (needs a key)",
        "declare const key: string;",
        "-->",
        "",
        `${fence}ts`,
        "console.log(key);",
        fence,
        "<!-- sample: continue -->",
        `${fence}ts`,
        "key;",
        fence,
        "<!-- sample: host SKILLBOX_API_KEYS=key1:alice -->",
        `${fence}sh`,
        "curl -s localhost:3000/health",
        fence,
      ].join("\n"),
    );
    expect(samples[0]).toMatchObject({
      mode: "typecheck",
      reason: "needs a key",
      prelude: "declare const key: string;\n",
      markerError: undefined,
    });
    expect(samples[1]).toMatchObject({ continues: true, mode: undefined });
    expect(samples[2]).toMatchObject({ mode: "host", hostEnvironment: { SKILLBOX_API_KEYS: "key1:alice" } });
  });

  it("refuses a skip or typecheck without a reason, and an unknown directive, naming the line and the fix", () => {
    const samples = samplesOf(
      `<!-- sample: skip -->\n${fence}sh\nrm -rf /\n${fence}\n<!-- sample: later -->\n${fence}ts\n1;\n${fence}\n`,
    );
    expect(samples[0]?.markerError).toBe(
      "README.md:2: `sample: skip` needs a reason in parentheses, e.g. `sample: skip (needs an API key)`",
    );
    expect(samples[1]?.markerError).toContain('README.md:6: unknown sample marker "later"');
  });
});

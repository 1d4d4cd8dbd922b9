import type { LoadWarning } from "@skillbox/loader";
import { loadSkills, SkillLoader, watchSkills } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let tree: TemporaryTree;
let host: TemporaryHost;

beforeEach(() => {
  tree = createTemporaryTree();
  host = createTemporaryHost();
});

afterEach(async () => {
  await host.dispose();
  tree.cleanup();
});

describe("a configured folder that does not exist", () => {
  it("is reported by loadSkills with the folder and the fix", async () => {
    const missing = tree.path("skils");
    const result = await loadSkills({
      dirs: [missing],
      npm: false,
      registry: host.registry,
      executor: host.executor,
    });
    try {
      expect(result.warnings).toEqual([
        { code: "FOLDER_NOT_FOUND", folder: missing, message: expect.stringContaining("no such folder") },
      ]);
      expect(result.warnings[0]?.message).toContain("create it, or configure the folders");
    } finally {
      result.loader.close();
    }
  });

  it("is announced as a `warning` event by the loader, as it happens", async () => {
    const missing = tree.path("skils");
    const loader = new SkillLoader({
      dirs: [missing],
      npm: false,
      registry: host.registry,
      executor: host.executor,
    });
    const warnings: LoadWarning[] = [];
    loader.on("warning", (warning) => warnings.push(warning));
    try {
      await loader.loadAll();
      expect(warnings.map((warning) => [warning.code, warning.folder])).toEqual([
        ["FOLDER_NOT_FOUND", missing],
      ]);
    } finally {
      loader.close();
    }
  });

  it("is announced as a `warning` event by watchSkills before it is ready", async () => {
    tree.mkdir("plugins");
    const missing = tree.path("skils");
    const watcher = watchSkills({
      dirs: [tree.path("plugins"), missing],
      npm: false,
      registry: host.registry,
      executor: host.executor,
    });
    const warnings: LoadWarning[] = [];
    watcher.on("warning", (warning) => warnings.push(warning));
    try {
      const report = await watcher.ready();
      expect(warnings.map((warning) => warning.folder)).toEqual([missing]);
      expect(report.warnings.map((warning) => warning.folder)).toEqual([missing]);
    } finally {
      await watcher.close();
    }
  });
});

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { ownerWorkspace, ownerWorkspaceSegment } from "@skillbox/core";
import * as handlerEntry from "@skillbox/core/handler";
import { afterEach, describe, expect, it } from "vitest";

const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function temporaryRoot(): string {
  const directory = mkdtempSync(join(tmpdir(), "skillbox-workspace-"));
  directories.push(directory);
  return directory;
}

describe("ownerWorkspaceSegment", () => {
  it("keeps a lowercase id of letters, digits, _ and - as it is", () => {
    expect(ownerWorkspaceSegment("acme")).toBe("acme");
    expect(ownerWorkspaceSegment("key_01-prod")).toBe("key_01-prod");
  });

  it("encodes unsafe ids as a readable slug plus a short hash", () => {
    expect(ownerWorkspaceSegment("Acme/Prod")).toMatch(/^Acme-Prod~[0-9a-f]{16}$/);
    expect(ownerWorkspaceSegment("user@example.com")).toMatch(/^user-example-com~[0-9a-f]{16}$/);
  });

  it("encodes reserved and empty names into safe folder names", () => {
    for (const owner of [".", "..", "", "con", "../../etc", "/", "a\u0000b", "ünïcode"]) {
      const segment = ownerWorkspaceSegment(owner);
      expect(segment).toMatch(/^[A-Za-z0-9_-]+~[0-9a-f]{16}$/);
    }
  });

  it("gives distinct folders to ids that differ only in case or in unsafe characters", () => {
    const owners = ["acme", "Acme", "ACME", "a.b", "a/b", "a b", "a-b", "a-b~x", ".", "..", "", "owner"];
    const segments = owners.map(ownerWorkspaceSegment);
    const folded = new Set(segments.map((segment) => segment.toLowerCase()));
    expect(folded.size).toBe(owners.length);
  });

  it("keeps long ids short while telling them apart", () => {
    const first = ownerWorkspaceSegment("a".repeat(500));
    const second = ownerWorkspaceSegment(`${"a".repeat(499)}b`);
    expect(first.length).toBeLessThanOrEqual(57);
    expect(first).not.toBe(second);
  });
});

describe("ownerWorkspace", () => {
  it("creates <root>/<segment> with mode 0700 and returns its absolute path", async () => {
    const root = join(temporaryRoot(), "nested", "root");
    const workspace = await ownerWorkspace("acme", { root });
    expect(workspace).toBe(join(root, "acme"));
    expect(statSync(workspace).isDirectory()).toBe(true);
    expect(statSync(workspace).mode & 0o777).toBe(0o700);
  });

  it("returns the same folder on later calls", async () => {
    const root = temporaryRoot();
    expect(await ownerWorkspace("Acme/Prod", { root })).toBe(await ownerWorkspace("Acme/Prod", { root }));
  });

  it("keeps hostile owner ids inside the root", async () => {
    const root = temporaryRoot();
    for (const owner of ["..", "../../escape", "/etc", "."]) {
      const workspace = await ownerWorkspace(owner, { root });
      expect(dirname(workspace)).toBe(root);
      expect(basename(workspace)).toBe(ownerWorkspaceSegment(owner));
    }
  });

  it("is also exported by the light @skillbox/core/handler entry", () => {
    expect(handlerEntry.ownerWorkspace).toBe(ownerWorkspace);
    expect(typeof handlerEntry.resolveWorkspacePath).toBe("function");
    expect(handlerEntry.SENSITIVE_PATH_NAMES).toContain(".env");
  });

  it("falls back to SKILLBOX_WORKSPACE_DIR when no root is given", async () => {
    const root = temporaryRoot();
    const previous = process.env.SKILLBOX_WORKSPACE_DIR;
    process.env.SKILLBOX_WORKSPACE_DIR = root;
    try {
      expect(await ownerWorkspace("acme")).toBe(join(root, "acme"));
    } finally {
      if (previous === undefined) delete process.env.SKILLBOX_WORKSPACE_DIR;
      else process.env.SKILLBOX_WORKSPACE_DIR = previous;
    }
  });
});

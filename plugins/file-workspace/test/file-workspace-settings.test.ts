import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SkillContext } from "@skillbox/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import fileWorkspace, {
  createFileWorkspaceSkill,
  readFileWorkspaceSettings,
  resolveFileWorkspaceSettings,
} from "../index.ts";
import { createTemporaryDirectory, createWorkspaceHost, type WorkspaceHost } from "./workspace-host.js";

const hosts: WorkspaceHost[] = [];
const folders: string[] = [];

afterEach(async () => {
  vi.unstubAllEnvs();
  for (const host of hosts.splice(0)) await host.dispose();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe("readFileWorkspaceSettings", () => {
  it("uses the defaults when nothing is set", () => {
    expect(readFileWorkspaceSettings({})).toEqual({
      root: resolve(".skillbox/workspaces"),
      maxFileBytes: 1024 * 1024,
      maxWorkspaceBytes: 100 * 1024 * 1024,
      listLimit: 1000,
      maxEntries: 10_000,
      maxDepth: 32,
    });
  });

  it("reads every variable", () => {
    expect(
      readFileWorkspaceSettings({
        SKILLBOX_WORKSPACE_DIR: "/srv/workspaces",
        SKILLBOX_WORKSPACE_MAX_FILE_BYTES: "2048",
        SKILLBOX_WORKSPACE_MAX_BYTES: "4096",
        SKILLBOX_WORKSPACE_LIST_LIMIT: "5",
        SKILLBOX_WORKSPACE_MAX_ENTRIES: "50",
        SKILLBOX_WORKSPACE_MAX_DEPTH: "4",
      }),
    ).toEqual({
      root: "/srv/workspaces",
      maxFileBytes: 2048,
      maxWorkspaceBytes: 4096,
      listLimit: 5,
      maxEntries: 50,
      maxDepth: 4,
    });
  });

  it("refuses a malformed number with CONFIG_INVALID naming the variable", () => {
    for (const name of [
      "SKILLBOX_WORKSPACE_MAX_FILE_BYTES",
      "SKILLBOX_WORKSPACE_MAX_ENTRIES",
      "SKILLBOX_WORKSPACE_MAX_DEPTH",
    ]) {
      for (const value of ["abc", "-1", "0", "1.5", "1e3"]) {
        expect(() => readFileWorkspaceSettings({ [name]: value })).toThrow(
          expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining(name) }),
        );
      }
    }
  });
});

describe("resolveFileWorkspaceSettings", () => {
  it("refuses a malformed factory option with CONFIG_INVALID naming the field", () => {
    expect(() => resolveFileWorkspaceSettings({ maxFileBytes: -5 })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining("`maxFileBytes`") }),
    );
    expect(() => createFileWorkspaceSkill({ listLimit: 0 })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID" }),
    );
  });
});

describe("createFileWorkspaceSkill", () => {
  it("reads the environment on every call when created without settings", async () => {
    const first = createTemporaryDirectory("skillbox-env-root-");
    const second = createTemporaryDirectory("skillbox-env-root-");
    folders.push(first, second);
    const host = createWorkspaceHost({}, () => fileWorkspace);
    hosts.push(host);
    vi.stubEnv("SKILLBOX_WORKSPACE_DIR", first);
    await host.execute({ operation: "write", path: "a.txt", content: "first" });
    vi.stubEnv("SKILLBOX_WORKSPACE_DIR", second);
    vi.stubEnv("SKILLBOX_WORKSPACE_MAX_FILE_BYTES", "3");
    const tooBig = await host.execute({ operation: "write", path: "a.txt", content: "second" });
    expect(tooBig.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect((await host.execute({ operation: "read", path: "a.txt" })).error?.code).toBe("FILE_NOT_FOUND");
    vi.stubEnv("SKILLBOX_WORKSPACE_DIR", first);
    vi.stubEnv("SKILLBOX_WORKSPACE_MAX_FILE_BYTES", "");
    expect((await host.execute({ operation: "read", path: "a.txt" })).output).toMatchObject({
      content: "first",
    });
  });

  it("reports a malformed environment variable as CONFIG_INVALID from the execution", async () => {
    const host = createWorkspaceHost({}, () => fileWorkspace);
    hosts.push(host);
    vi.stubEnv("SKILLBOX_WORKSPACE_DIR", join(host.host.directory, "env-root"));
    vi.stubEnv("SKILLBOX_WORKSPACE_LIST_LIMIT", "lots");
    const list = await host.execute({ operation: "list" });
    expect(list.error?.code).toBe("CONFIG_INVALID");
    expect(list.error?.message).toContain("SKILLBOX_WORKSPACE_LIST_LIMIT");
  });

  it("honours an aborted signal and writes nothing", async () => {
    const root = createTemporaryDirectory("skillbox-abort-root-");
    folders.push(root);
    const skill = createFileWorkspaceSkill({ root });
    const controller = new AbortController();
    controller.abort();
    const context = { signal: controller.signal, apiKeyId: "alice" } as SkillContext;
    await expect(
      skill.handler({ operation: "write", path: "a.txt", content: "x" }, context),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(existsSync(join(root, "alice", "a.txt"))).toBe(false);
  });
});

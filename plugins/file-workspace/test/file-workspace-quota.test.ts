import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import fileWorkspace from "../index.ts";
import { WORKSPACE_ENTRY_BYTES } from "../lib/file-workspace-settings.js";
import { workspaceUsageCache } from "../lib/workspace-usage.js";
import { createWorkspaceHost, type WorkspaceHost } from "./workspace-host.js";

const hosts: WorkspaceHost[] = [];

afterEach(async () => {
  vi.unstubAllEnvs();
  for (const host of hosts.splice(0)) await host.dispose();
});

function workspaceHost(...options: Parameters<typeof createWorkspaceHost>): WorkspaceHost {
  const host = createWorkspaceHost(...options);
  hosts.push(host);
  return host;
}

/** `levels` folder names and a file: `d0/d1/…/file.txt`. */
function nestedPath(levels: number): string {
  return [...Array.from({ length: levels }, (_, index) => `d${index}`), "file.txt"].join("/");
}

describe("file-workspace quota", () => {
  it("refuses a path deeper than the depth cap with PATH_REFUSED naming the limit, creating nothing", async () => {
    const { execute, fileOf } = workspaceHost();
    // 32 levels (31 folders and the file) is the default cap.
    expect((await execute({ operation: "write", path: nestedPath(31), content: "x" })).status).toBe(
      "success",
    );
    const deep = await execute({ operation: "write", path: `deep/${nestedPath(32)}`, content: "x" });
    expect(deep.error?.code).toBe("PATH_REFUSED");
    expect(deep.error?.message).toContain("SKILLBOX_WORKSPACE_MAX_DEPTH");
    expect(deep.error?.data).toMatchObject({ depth: 34, limit: 32 });
    expect(existsSync(fileOf("deep"))).toBe(false);
  });

  it("takes the depth cap from SKILLBOX_WORKSPACE_MAX_DEPTH", async () => {
    const host = workspaceHost({}, () => fileWorkspace);
    vi.stubEnv("SKILLBOX_WORKSPACE_DIR", host.root);
    vi.stubEnv("SKILLBOX_WORKSPACE_MAX_DEPTH", "3");
    expect((await host.execute({ operation: "write", path: "a/b/c.txt", content: "x" })).status).toBe(
      "success",
    );
    const refused = await host.execute({ operation: "write", path: "a/b/c/d.txt", content: "x" });
    expect(refused.error).toMatchObject({ code: "PATH_REFUSED", data: { depth: 4, limit: 3 } });
    vi.stubEnv("SKILLBOX_WORKSPACE_MAX_DEPTH", "deep");
    expect((await host.execute({ operation: "list" })).error).toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("SKILLBOX_WORKSPACE_MAX_DEPTH"),
    });
  });

  it("counts every folder a write creates toward the total cap", async () => {
    // Room for 20 entries and nothing else: empty files in new folders use it up by folders.
    const { execute, fileOf } = workspaceHost({ maxWorkspaceBytes: 20 * WORKSPACE_ENTRY_BYTES });
    const outcomes: string[] = [];
    for (let index = 0; index < 10; index++) {
      const written = await execute({ operation: "write", path: `f${index}/g/empty.txt`, content: "" });
      outcomes.push(written.error?.code ?? written.status);
    }
    // Each write adds two folders and a file: six writes are 18 entries, a seventh would be 21.
    expect(outcomes).toEqual([...Array(6).fill("success"), ...Array(4).fill("SIZE_LIMIT_EXCEEDED")]);
    expect(existsSync(fileOf("f6"))).toBe(false);
    const refused = await execute({ operation: "write", path: "f6/g/empty.txt", content: "" });
    expect(refused.error?.message).toContain("per file and folder");
    // Deleting releases what an entry cost: 16 entries left, so four more files fit, not five.
    expect((await execute({ operation: "delete", path: "f0/g/empty.txt" })).status).toBe("success");
    expect((await execute({ operation: "delete", path: "f0/g" })).status).toBe("success");
    for (const name of ["one", "two", "three", "four"]) {
      expect((await execute({ operation: "write", path: `f0/${name}.txt`, content: "" })).status).toBe(
        "success",
      );
    }
    expect((await execute({ operation: "write", path: "f0/five.txt", content: "" })).error?.code).toBe(
      "SIZE_LIMIT_EXCEEDED",
    );
  });

  it("caps the number of files and folders with SIZE_LIMIT_EXCEEDED naming SKILLBOX_WORKSPACE_MAX_ENTRIES", async () => {
    const { execute } = workspaceHost({ maxEntries: 5 });
    expect((await execute({ operation: "write", path: "a/b/c/d.txt", content: "x" })).status).toBe("success");
    expect((await execute({ operation: "write", path: "a/e.txt", content: "x" })).status).toBe("success");
    const refused = await execute({ operation: "write", path: "a/f.txt", content: "x" });
    expect(refused.error).toMatchObject({
      code: "SIZE_LIMIT_EXCEEDED",
      message: expect.stringContaining("SKILLBOX_WORKSPACE_MAX_ENTRIES"),
      data: { entries: 6, limit: 5 },
    });
    // Replacing an existing file adds no entry.
    expect((await execute({ operation: "write", path: "a/e.txt", content: "yy" })).status).toBe("success");
  });

  it("counts what was already in the workspace when it first sees it", async () => {
    const host = workspaceHost({ maxWorkspaceBytes: 10 * WORKSPACE_ENTRY_BYTES });
    await host.execute({ operation: "list" });
    // Nine folders placed by someone else: the tenth entry is the last that fits.
    for (let index = 0; index < 9; index++) mkdirSync(host.fileOf(`placed-${index}`));
    writeFileSync(host.fileOf("placed-0/x"), "");
    expect((await host.execute({ operation: "write", path: "new.txt", content: "" })).error?.code).toBe(
      "SIZE_LIMIT_EXCEEDED",
    );
  });

  it("keeps usage up to date instead of walking the tree on every write", async () => {
    const { execute, fileOf } = workspaceHost();
    await execute({ operation: "list" });
    for (let index = 0; index < 200; index++) mkdirSync(fileOf(`tree/folder-${index}`), { recursive: true });
    const before = workspaceUsageCache.scans;
    for (let index = 0; index < 20; index++) {
      expect((await execute({ operation: "write", path: `notes/${index}.txt`, content: "x" })).status).toBe(
        "success",
      );
    }
    await execute({ operation: "delete", path: "notes/0.txt" });
    // One scan when the workspace is first written to, none for the other 20 changes.
    expect(workspaceUsageCache.scans - before).toBe(1);
  });

  it("keeps the usage it has when a change is refused, so refusals at the cap do not walk the tree", async () => {
    const { execute, fileOf } = workspaceHost({ maxWorkspaceBytes: 4 * WORKSPACE_ENTRY_BYTES });
    await execute({ operation: "list" });
    mkdirSync(fileOf("kept/inner"), { recursive: true });
    expect((await execute({ operation: "write", path: "a.txt", content: "" })).status).toBe("success");
    const before = workspaceUsageCache.scans;
    const refusals = [
      await execute({ operation: "write", path: "b/c.txt", content: "" }),
      await execute({ operation: "write", path: "kept", content: "" }),
      await execute({ operation: "delete", path: "missing.txt" }),
      await execute({ operation: "delete", path: "kept" }),
    ];
    expect(refusals.map((refusal) => refusal.error?.code)).toEqual([
      "SIZE_LIMIT_EXCEEDED",
      "PATH_REFUSED",
      "FILE_NOT_FOUND",
      expect.any(String),
    ]);
    // Still exactly at the cap (three entries), with no scan since: the fourth entry fits, a fifth does not.
    expect((await execute({ operation: "write", path: "d.txt", content: "" })).status).toBe("success");
    expect((await execute({ operation: "write", path: "e.txt", content: "" })).error?.code).toBe(
      "SIZE_LIMIT_EXCEEDED",
    );
    expect(workspaceUsageCache.scans - before).toBe(0);
  });

  it("lets concurrent writes of one owner together take no more than the cap", async () => {
    const { execute } = workspaceHost({
      maxFileBytes: 1000,
      maxWorkspaceBytes: 3 * (WORKSPACE_ENTRY_BYTES + 1000),
    });
    const writes = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        execute({ operation: "write", path: `file-${index}.txt`, content: "x".repeat(1000) }),
      ),
    );
    expect(writes.filter((write) => write.status === "success")).toHaveLength(3);
    expect(writes.filter((write) => write.error?.code === "SIZE_LIMIT_EXCEEDED")).toHaveLength(5);
  });
});

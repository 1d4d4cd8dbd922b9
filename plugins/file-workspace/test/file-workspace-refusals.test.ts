import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTemporaryDirectory, createWorkspaceHost, type WorkspaceHost } from "./workspace-host.js";

const hosts: WorkspaceHost[] = [];
const folders: string[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function workspaceHost(...options: Parameters<typeof createWorkspaceHost>): WorkspaceHost {
  const host = createWorkspaceHost(...options);
  hosts.push(host);
  return host;
}

/** A folder outside every workspace holding `secret.txt`. */
function outsideFolder(): string {
  const folder = createTemporaryDirectory("skillbox-outside-");
  folders.push(folder);
  writeFileSync(join(folder, "secret.txt"), "outside secret");
  return folder;
}

/** Makes sure alice's workspace exists, so the test can place things in it. */
async function aliceWorkspace(host: WorkspaceHost): Promise<string> {
  await host.execute({ operation: "list" });
  return host.fileOf(".");
}

describe("file-workspace refusals", () => {
  it("refuses an absolute path with PATH_REFUSED naming the path", async () => {
    const { execute } = workspaceHost();
    const read = await execute({ operation: "read", path: "/etc/passwd" });
    expect(read.status).toBe("error");
    expect(read.error?.code).toBe("PATH_REFUSED");
    expect(read.error?.message).toContain('"/etc/passwd"');
    expect(read.error?.message).toContain("absolute");
    const write = await execute({ operation: "write", path: "C:/Windows/x.txt", content: "x" });
    expect(write.error?.code).toBe("PATH_REFUSED");
  });

  it("refuses a `../` escape", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "mine.txt", content: "x" }, "bob");
    const read = await execute({ operation: "read", path: "../bob/mine.txt" });
    expect(read.error?.code).toBe("PATH_REFUSED");
    expect(read.error?.message).toContain("..");
    const write = await execute({ operation: "write", path: "a/../../escape.txt", content: "x" });
    expect(write.error?.code).toBe("PATH_REFUSED");
  });

  it("refuses a symlink inside the workspace that points outside, for every operation", async () => {
    const host = workspaceHost();
    const outside = outsideFolder();
    const workspace = await aliceWorkspace(host);
    symlinkSync(join(outside, "secret.txt"), join(workspace, "link.txt"));
    symlinkSync(outside, join(workspace, "outside-dir"), "dir");
    const attempts = [
      { operation: "read", path: "link.txt" },
      { operation: "read", path: "outside-dir/secret.txt" },
      { operation: "write", path: "outside-dir/planted.txt", content: "x" },
      { operation: "write", path: "link.txt", content: "overwrite" },
      { operation: "list", path: "outside-dir" },
      { operation: "stat", path: "outside-dir/secret.txt" },
      { operation: "delete", path: "outside-dir/secret.txt" },
    ];
    for (const input of attempts) {
      const execution = await host.execute(input);
      expect(execution.error?.code, JSON.stringify(input)).toBe("PATH_REFUSED");
    }
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside secret");
  });

  it("refuses reading or appending to a hard link, which may be a file outside the workspace", async () => {
    const host = workspaceHost();
    const outside = outsideFolder();
    const workspace = await aliceWorkspace(host);
    linkSync(join(outside, "secret.txt"), join(workspace, "hard.txt"));
    const read = await host.execute({ operation: "read", path: "hard.txt" });
    expect(read.error?.code).toBe("PATH_REFUSED");
    expect(read.error?.message).toContain("hard link");
    expect(JSON.stringify(read.output)).not.toContain("outside secret");
    const append = await host.execute({ operation: "write", path: "hard.txt", content: "!", append: true });
    expect(append.error?.code).toBe("PATH_REFUSED");
    expect(readFileSync(join(workspace, "hard.txt"), "utf8")).toBe("outside secret");
    // Replacing renames a new file over the name, so the outside file keeps its content.
    const replace = await host.execute({ operation: "write", path: "hard.txt", content: "mine" });
    expect(replace.status).toBe("success");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside secret");
    expect((await host.execute({ operation: "read", path: "hard.txt" })).output).toMatchObject({
      content: "mine",
    });
  });

  it("refuses a path too long for the file system with PATH_REFUSED, never naming the host folder", async () => {
    const host = workspaceHost();
    const path = Array.from({ length: 500 }, () => "abcdefghij").join("/");
    for (const input of [
      { operation: "write", path, content: "x" },
      { operation: "read", path },
      { operation: "stat", path },
      { operation: "list", path },
      { operation: "delete", path },
    ]) {
      const execution = await host.execute(input);
      expect(execution.error?.code, input.operation).toBe("PATH_REFUSED");
      // A write of 500 levels meets the depth cap before the file system's length limit.
      const expected = input.operation === "write" ? /depth cap/ : /too long/;
      expect(execution.error?.message, input.operation).toMatch(expected);
      expect(execution.error?.message, input.operation).not.toContain(host.root);
    }
  });

  it("lists a symlink without following it", async () => {
    const host = workspaceHost();
    const outside = outsideFolder();
    const workspace = await aliceWorkspace(host);
    symlinkSync(outside, join(workspace, "outside-dir"), "dir");
    const list = await host.execute({ operation: "list", recursive: true });
    expect(list.output).toMatchObject({ entries: [{ name: "outside-dir", type: "symlink", bytes: 0 }] });
  });

  it("refuses sensitive names", async () => {
    const { execute } = workspaceHost();
    for (const path of [".env", ".git/config", "keys/id_rsa", "x.pem"]) {
      for (const input of [
        { operation: "write", path, content: "x" },
        { operation: "read", path },
      ]) {
        const execution = await execute(input);
        expect(execution.error?.code, `${input.operation} ${path}`).toBe("PATH_REFUSED");
        expect(execution.error?.message, path).toContain("sensitive name");
      }
    }
  });

  it("refuses reading a file over the configured cap with SIZE_LIMIT_EXCEEDED", async () => {
    const host = workspaceHost({ maxFileBytes: 10 });
    const workspace = await aliceWorkspace(host);
    writeFileSync(join(workspace, "big.txt"), "x".repeat(11));
    const read = await host.execute({ operation: "read", path: "big.txt" });
    expect(read.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(read.error?.message).toContain("SKILLBOX_WORKSPACE_MAX_FILE_BYTES");
    expect(read.error?.data).toMatchObject({ bytes: 11, limit: 10 });
  });

  it("refuses reading a file over the request's maxBytes", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "a.txt", content: "12345" });
    const read = await execute({ operation: "read", path: "a.txt", maxBytes: 4 });
    expect(read.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(read.error?.message).toContain("maxBytes");
    expect((await execute({ operation: "read", path: "a.txt", maxBytes: 5 })).status).toBe("success");
  });

  it("refuses writing content over the file cap, and leaves the old file alone", async () => {
    const { execute, fileOf } = workspaceHost({ maxFileBytes: 10 });
    await execute({ operation: "write", path: "a.txt", content: "old" });
    const write = await execute({ operation: "write", path: "a.txt", content: "x".repeat(11) });
    expect(write.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    const append = await execute({ operation: "write", path: "a.txt", content: "x".repeat(8), append: true });
    expect(append.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(readFileSync(fileOf("a.txt"), "utf8")).toBe("old");
  });

  it("refuses a write that would take the workspace over its total cap", async () => {
    // Each file also costs a 4 KiB block: two files of 150 bytes together fit, 160 do not.
    const { execute } = workspaceHost({ maxFileBytes: 100, maxWorkspaceBytes: 2 * 4096 + 150 });
    await execute({ operation: "write", path: "a.txt", content: "x".repeat(100) });
    const over = await execute({ operation: "write", path: "b.txt", content: "x".repeat(60) });
    expect(over.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(over.error?.message).toContain("SKILLBOX_WORKSPACE_MAX_BYTES");
    // Replacing a file counts its new size instead of its old one.
    expect((await execute({ operation: "write", path: "a.txt", content: "x".repeat(90) })).status).toBe(
      "success",
    );
    expect((await execute({ operation: "write", path: "b.txt", content: "x".repeat(60) })).status).toBe(
      "success",
    );
  });

  it("counts each owner's total separately", async () => {
    const { execute } = workspaceHost({ maxFileBytes: 100, maxWorkspaceBytes: 4096 + 100 });
    await execute({ operation: "write", path: "a.txt", content: "x".repeat(100) }, "alice");
    expect(
      (await execute({ operation: "write", path: "a.txt", content: "x".repeat(100) }, "bob")).status,
    ).toBe("success");
  });

  it("refuses a FIFO instead of blocking on it", async () => {
    const host = workspaceHost();
    const workspace = await aliceWorkspace(host);
    execFileSync("mkfifo", [join(workspace, "pipe")]);
    expect((await host.execute({ operation: "read", path: "pipe" })).error?.code).toBe("PATH_REFUSED");
    expect((await host.execute({ operation: "write", path: "pipe", content: "x" })).error?.code).toBe(
      "PATH_REFUSED",
    );
  });

  it("refuses to read or write a folder as a file", async () => {
    const host = workspaceHost();
    const workspace = await aliceWorkspace(host);
    mkdirSync(join(workspace, "dir"));
    expect((await host.execute({ operation: "read", path: "dir" })).error?.code).toBe("PATH_REFUSED");
    expect((await host.execute({ operation: "write", path: "dir", content: "x" })).error?.code).toBe(
      "PATH_REFUSED",
    );
  });
});

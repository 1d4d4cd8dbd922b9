import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { isDefinedSkill } from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";
import fileWorkspace, { createFileWorkspaceSkill } from "../index.ts";
import { createWorkspaceHost, manifest, type WorkspaceHost } from "./workspace-host.js";

const hosts: WorkspaceHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

function workspaceHost(...options: Parameters<typeof createWorkspaceHost>): WorkspaceHost {
  const host = createWorkspaceHost(...options);
  hosts.push(host);
  return host;
}

describe("file-workspace plugin", () => {
  it("default-exports a defined skill", () => {
    expect(isDefinedSkill(fileWorkspace)).toBe(true);
    expect(isDefinedSkill(createFileWorkspaceSkill({ root: "/tmp/unused" }))).toBe(true);
  });

  it("declares the same schemas and manifest fields in code as in skill.json", () => {
    expect(fileWorkspace.input).toMatchObject(manifest.input ?? {});
    expect(fileWorkspace.output).toMatchObject(manifest.output ?? {});
    expect(fileWorkspace).toMatchObject({
      name: manifest.name,
      description: manifest.description,
      timeoutMs: manifest.timeoutMs,
      tags: manifest.tags,
    });
  });

  it("writes then reads UTF-8 text", async () => {
    const { execute, fileOf } = workspaceHost();
    const text = "héllo wörld\n";
    const write = await execute({ operation: "write", path: "notes/hello.txt", content: text });
    expect(write.status).toBe("success");
    expect(write.output).toEqual({
      operation: "write",
      path: "notes/hello.txt",
      bytes: Buffer.byteLength(text),
      size: Buffer.byteLength(text),
      created: true,
    });
    expect(readFileSync(fileOf("notes/hello.txt"), "utf8")).toBe(text);
    const read = await execute({ operation: "read", path: "notes/hello.txt" });
    expect(read.output).toMatchObject({
      operation: "read",
      path: "notes/hello.txt",
      encoding: "utf8",
      content: text,
      bytes: Buffer.byteLength(text),
    });
    expect(Number.isNaN(Date.parse((read.output as { modifiedAt: string }).modifiedAt))).toBe(false);
  });

  it("writes then reads bytes in base64", async () => {
    const { execute, fileOf } = workspaceHost();
    const bytes = Buffer.from([0, 255, 1, 254, 0x80, 10]);
    const write = await execute({
      operation: "write",
      path: "blob.bin",
      content: bytes.toString("base64"),
      encoding: "base64",
    });
    expect(write.output).toMatchObject({ bytes: 6, created: true });
    expect(readFileSync(fileOf("blob.bin"))).toEqual(bytes);
    const read = await execute({ operation: "read", path: "blob.bin", encoding: "base64" });
    expect(read.output).toMatchObject({ content: bytes.toString("base64"), encoding: "base64", bytes: 6 });
  });

  it("refuses to decode a binary file as UTF-8 and points to base64", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "blob.bin", content: "//79", encoding: "base64" });
    const read = await execute({ operation: "read", path: "blob.bin" });
    expect(read.error?.code).toBe("INPUT_INVALID");
    expect(read.error?.message).toContain('encoding "base64"');
  });

  it("refuses content that is not base64 when encoding is base64", async () => {
    const { execute } = workspaceHost();
    const write = await execute({
      operation: "write",
      path: "x.bin",
      content: "not base64!",
      encoding: "base64",
    });
    expect(write.error?.code).toBe("INPUT_INVALID");
  });

  it("replaces a file, and appends to it with append", async () => {
    const { execute, fileOf } = workspaceHost();
    await execute({ operation: "write", path: "log.txt", content: "one\n" });
    const append = await execute({ operation: "write", path: "log.txt", content: "two\n", append: true });
    expect(append.output).toMatchObject({ bytes: 4, size: 8, created: false });
    expect(readFileSync(fileOf("log.txt"), "utf8")).toBe("one\ntwo\n");
    await execute({ operation: "write", path: "log.txt", content: "three\n" });
    expect(readFileSync(fileOf("log.txt"), "utf8")).toBe("three\n");
  });

  it("appending to a missing file creates it", async () => {
    const { execute, fileOf } = workspaceHost();
    const append = await execute({ operation: "write", path: "new.txt", content: "x", append: true });
    expect(append.output).toMatchObject({ created: true, size: 1 });
    expect(readFileSync(fileOf("new.txt"), "utf8")).toBe("x");
  });

  it("leaves no temporary files behind after writes", async () => {
    const { execute, fileOf } = workspaceHost();
    await execute({ operation: "write", path: "a.txt", content: "a" });
    await execute({ operation: "write", path: "a.txt", content: "b", append: true });
    expect(readdirSync(fileOf("."))).toEqual(["a.txt"]);
  });

  it("refuses a missing parent folder when createParents is false", async () => {
    const { execute } = workspaceHost();
    const write = await execute({
      operation: "write",
      path: "missing/a.txt",
      content: "a",
      createParents: false,
    });
    expect(write.error?.code).toBe("FILE_NOT_FOUND");
    expect(write.error?.message).toContain("createParents");
  });

  it("reports a file used as a folder as FILE_NOT_FOUND", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "plain.txt", content: "x" });
    const write = await execute({ operation: "write", path: "plain.txt/inner.txt", content: "x" });
    expect(write.error?.code).toBe("FILE_NOT_FOUND");
    expect(write.error?.message).toContain("is a file");
    expect((await execute({ operation: "read", path: "plain.txt/inner.txt" })).error?.code).toBe(
      "FILE_NOT_FOUND",
    );
  });

  it("lists a folder, sorted, with types, sizes and times", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "b.txt", content: "bb" });
    await execute({ operation: "write", path: "a/inner.txt", content: "i" });
    const list = await execute({ operation: "list" });
    expect(list.status).toBe("success");
    const output = list.output as { path: string; entries: Record<string, unknown>[]; truncated: boolean };
    expect(output.path).toBe(".");
    expect(output.truncated).toBe(false);
    expect(output.entries.map(({ name, path, type, bytes }) => ({ name, path, type, bytes }))).toEqual([
      { name: "a", path: "a", type: "directory", bytes: 0 },
      { name: "b.txt", path: "b.txt", type: "file", bytes: 2 },
    ]);
  });

  it("lists recursively, a folder's entries before its sub-folders' entries", async () => {
    const { execute } = workspaceHost();
    for (const path of ["top.txt", "a/one.txt", "a/deep/two.txt", "b/three.txt"]) {
      await execute({ operation: "write", path, content: path });
    }
    const list = await execute({ operation: "list", path: ".", recursive: true });
    const paths = (list.output as { entries: { path: string }[] }).entries.map((entry) => entry.path);
    expect(paths).toEqual(["a", "b", "top.txt", "a/deep", "a/one.txt", "a/deep/two.txt", "b/three.txt"]);
    const sub = await execute({ operation: "list", path: "a", recursive: true });
    expect((sub.output as { entries: { path: string }[] }).entries.map((entry) => entry.path)).toEqual([
      "a/deep",
      "a/one.txt",
      "a/deep/two.txt",
    ]);
  });

  it("stops at limit and says the list is truncated", async () => {
    const { execute } = workspaceHost();
    for (const name of ["1.txt", "2.txt", "3.txt"])
      await execute({ operation: "write", path: name, content: "x" });
    const limited = await execute({ operation: "list", limit: 2 });
    expect(limited.output).toMatchObject({ truncated: true });
    expect((limited.output as { entries: unknown[] }).entries).toHaveLength(2);
    const exact = await execute({ operation: "list", limit: 3 });
    expect(exact.output).toMatchObject({ truncated: false });
  });

  it("applies the configured list limit over a larger requested limit", async () => {
    const { execute } = workspaceHost({ listLimit: 1 });
    for (const name of ["1.txt", "2.txt"]) await execute({ operation: "write", path: name, content: "x" });
    const list = await execute({ operation: "list", limit: 100 });
    expect(list.output).toMatchObject({ truncated: true, entries: [{ name: "1.txt" }] });
  });

  it("leaves sensitive names out of listings", async () => {
    const { execute, fileOf } = workspaceHost();
    await execute({ operation: "write", path: "visible.txt", content: "x" });
    writeFileSync(fileOf(".env"), "SECRET=1");
    const list = await execute({ operation: "list" });
    expect((list.output as { entries: { name: string }[] }).entries.map((entry) => entry.name)).toEqual([
      "visible.txt",
    ]);
  });

  it("lists a file as itself", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "a/b.txt", content: "x" });
    const list = await execute({ operation: "list", path: "a/b.txt" });
    expect(list.output).toMatchObject({ entries: [{ name: "b.txt", path: "a/b.txt", type: "file" }] });
  });

  it("deletes files and empty folders, and refuses folders that are not empty", async () => {
    const { execute, fileOf } = workspaceHost();
    await execute({ operation: "write", path: "dir/a.txt", content: "a" });
    const notEmpty = await execute({ operation: "delete", path: "dir" });
    expect(notEmpty.error?.code).toBe("PATH_REFUSED");
    expect(notEmpty.error?.message).toContain("not empty");
    expect(await execute({ operation: "delete", path: "dir/a.txt" })).toMatchObject({
      output: { operation: "delete", path: "dir/a.txt", type: "file" },
    });
    expect(existsSync(fileOf("dir/a.txt"))).toBe(false);
    expect((await execute({ operation: "delete", path: "dir" })).output).toMatchObject({ type: "directory" });
    expect(existsSync(fileOf("dir"))).toBe(false);
  });

  it("refuses to delete the workspace root", async () => {
    const { execute } = workspaceHost();
    expect((await execute({ operation: "delete", path: "." })).error?.code).toBe("PATH_REFUSED");
  });

  it("stats files and folders", async () => {
    const { execute } = workspaceHost();
    await execute({ operation: "write", path: "dir/a.txt", content: "abc" });
    expect((await execute({ operation: "stat", path: "dir/a.txt" })).output).toMatchObject({
      operation: "stat",
      path: "dir/a.txt",
      type: "file",
      bytes: 3,
    });
    expect((await execute({ operation: "stat", path: "dir" })).output).toMatchObject({ type: "directory" });
  });

  it("reports missing files as FILE_NOT_FOUND for read, list, delete and stat", async () => {
    const { execute } = workspaceHost();
    for (const operation of ["read", "list", "delete", "stat"]) {
      const execution = await execute({ operation, path: "nothing/here.txt" });
      expect(execution.status, operation).toBe("error");
      expect(execution.error?.code, operation).toBe("FILE_NOT_FOUND");
      expect(execution.error?.message, operation).toContain('"nothing/here.txt"');
    }
  });

  it("keeps each owner in its own workspace", async () => {
    const { execute, fileOf } = workspaceHost();
    await execute({ operation: "write", path: "secret.txt", content: "alice's" }, "alice");
    const read = await execute({ operation: "read", path: "secret.txt" }, "bob");
    expect(read.error?.code).toBe("FILE_NOT_FOUND");
    const list = await execute({ operation: "list" }, "bob");
    expect(list.output).toMatchObject({ entries: [] });
    await execute({ operation: "write", path: "secret.txt", content: "bob's" }, "bob");
    expect(readFileSync(fileOf("secret.txt", "alice"), "utf8")).toBe("alice's");
    expect(readFileSync(fileOf("secret.txt", "bob"), "utf8")).toBe("bob's");
  });

  it("keeps an owner whose id looks like a path inside its own encoded folder", async () => {
    const { execute, root } = workspaceHost();
    await execute({ operation: "write", path: "a.txt", content: "x" }, "../bob");
    expect(readdirSync(root)).toEqual([expect.stringMatching(/^bob~[0-9a-f]{16}$/)]);
    expect((await execute({ operation: "read", path: "a.txt" }, "bob")).error?.code).toBe("FILE_NOT_FOUND");
  });

  it("rejects an unknown operation and fields of another operation as INPUT_INVALID", async () => {
    const { execute } = workspaceHost();
    expect((await execute({ operation: "chmod", path: "a" })).error?.code).toBe("INPUT_INVALID");
    expect((await execute({ operation: "read", path: "a", append: true })).error?.code).toBe("INPUT_INVALID");
    expect((await execute({ operation: "write", path: "a" })).error?.code).toBe("INPUT_INVALID");
  });

  it("creates the owner's workspace on first use", async () => {
    const { execute, fileOf } = workspaceHost();
    expect(existsSync(fileOf(".", "carol"))).toBe(false);
    expect((await execute({ operation: "list" }, "carol")).output).toMatchObject({ entries: [] });
    expect(existsSync(fileOf(".", "carol"))).toBe(true);
  });
});

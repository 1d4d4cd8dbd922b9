import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  isSkillboxError,
  matchSensitivePathName,
  resolveWorkspacePath,
  SENSITIVE_PATH_NAMES,
  type SkillboxError,
} from "@skillbox/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let base: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "skillbox-resolve-")));
  workspace = join(base, "workspace");
  outside = join(base, "outside");
  mkdirSync(join(workspace, "notes"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, "notes", "a.txt"), "a");
  writeFileSync(join(outside, "secret.txt"), "secret");
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

async function refusal(path: string, options?: { forWrite?: boolean }): Promise<SkillboxError> {
  const error = await resolveWorkspacePath(workspace, path, options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isSkillboxError(error)) throw new Error(`expected ${JSON.stringify(path)} to be refused`);
  return error;
}

describe("resolveWorkspacePath", () => {
  it("resolves a relative path of an existing file to its real path", async () => {
    expect(await resolveWorkspacePath(workspace, "notes/a.txt")).toBe(join(workspace, "notes", "a.txt"));
  });

  it("resolves a path whose folders do not exist yet", async () => {
    expect(await resolveWorkspacePath(workspace, "new/deeper/b.txt", { forWrite: true })).toBe(
      join(workspace, "new", "deeper", "b.txt"),
    );
  });

  it("resolves a path through a file, leaving the error to the file operation", async () => {
    expect(await resolveWorkspacePath(workspace, "notes/a.txt/b.txt")).toBe(
      join(workspace, "notes", "a.txt", "b.txt"),
    );
  });

  it("treats an empty path, '.' and redundant slashes as the workspace root", async () => {
    expect(await resolveWorkspacePath(workspace, "")).toBe(workspace);
    expect(await resolveWorkspacePath(workspace, ".")).toBe(workspace);
    expect(await resolveWorkspacePath(workspace, "./notes//a.txt/")).toBe(join(workspace, "notes", "a.txt"));
  });

  it("refuses the workspace root for writing", async () => {
    expect((await refusal(".", { forWrite: true })).code).toBe("PATH_REFUSED");
  });

  it("refuses absolute POSIX paths, naming the path and what is allowed", async () => {
    const error = await refusal("/etc/passwd");
    expect(error.code).toBe("PATH_REFUSED");
    expect(error.message).toContain('"/etc/passwd"');
    expect(error.message).toContain("absolute");
    expect(error.message).toContain("relative path inside the workspace");
  });

  it("refuses Windows absolute forms: drive letters, drive-relative paths and UNC shares", async () => {
    for (const path of ["C:/Windows", "c:relative.txt", "//server/share/x", "\\\\server\\share"]) {
      expect((await refusal(path)).code).toBe("PATH_REFUSED");
    }
  });

  it("refuses backslashes", async () => {
    expect((await refusal("notes\\a.txt")).message).toContain("backslash");
  });

  it("refuses any `..` segment, even one that would stay inside", async () => {
    for (const path of ["../outside/secret.txt", "notes/../../outside", "notes/../notes/a.txt", ".."]) {
      const error = await refusal(path);
      expect(error.code).toBe("PATH_REFUSED");
      expect(error.message).toContain("..");
    }
  });

  it("refuses NUL bytes and control characters", async () => {
    expect((await refusal("a.txt\u0000.png")).message).toContain("NUL");
    expect((await refusal("line\nbreak")).code).toBe("PATH_REFUSED");
  });

  it("refuses sensitive names in any segment, in any case", async () => {
    const paths = [
      ".env",
      ".env.production",
      "app/.git/config",
      ".ssh/known_hosts",
      "keys/id_rsa",
      "keys/id_ed25519.pub",
      "certs/server.pem",
      "tls.KEY",
      "bundle.p12",
      ".aws/credentials",
      ".npmrc",
      ".netrc",
      ".pgpass",
      ".htpasswd",
      ".docker/config.json",
      ".ENV",
      ".env.",
    ];
    for (const path of paths) {
      const error = await refusal(path);
      expect(error.code, path).toBe("PATH_REFUSED");
      expect(error.message, path).toContain("sensitive name");
    }
  });

  it("refuses sensitive names written with Unicode case folding or as an NTFS data stream", async () => {
    // U+212A KELVIN SIGN folds to `k` and U+017F LONG S to `s` on case-insensitive disks (APFS).
    for (const path of [
      ".\u212Aube/config",
      ".\u017Fsh/known_hosts",
      "tls.\u212Aey",
      ".env::$DATA",
      "id_rsa:x",
    ]) {
      const error = await refusal(path);
      expect(error.code, path).toBe("PATH_REFUSED");
      expect(error.message, path).toContain("sensitive name");
    }
  });

  it("refuses a name longer than 255 bytes with PATH_REFUSED, never naming the host folder", async () => {
    for (const path of ["a".repeat(256), `notes/${"é".repeat(128)}`]) {
      const error = await refusal(path);
      expect(error.code, path).toBe("PATH_REFUSED");
      expect(error.message, path).toContain("longer than 255 bytes");
      expect(error.message, path).not.toContain(base);
    }
    await expect(resolveWorkspacePath(workspace, "a".repeat(255))).resolves.toBe(
      join(workspace, "a".repeat(255)),
    );
  });

  it("allows names that only resemble sensitive ones", async () => {
    for (const path of [
      "env",
      "my.env.example.txt",
      "git/config",
      "keys.txt",
      "pem/readme.md",
      "monkey.json",
    ]) {
      await expect(resolveWorkspacePath(workspace, path)).resolves.toBe(join(workspace, path));
    }
  });

  it("refuses a symlink inside the workspace that points outside", async () => {
    symlinkSync(join(outside, "secret.txt"), join(workspace, "link.txt"));
    const error = await refusal("link.txt");
    expect(error.code).toBe("PATH_REFUSED");
    expect(error.message).toContain("symlink leading out of the workspace");
  });

  it("refuses a path through a folder symlink in the middle that points outside", async () => {
    symlinkSync(outside, join(workspace, "notes", "elsewhere"), "dir");
    expect((await refusal("notes/elsewhere/secret.txt")).code).toBe("PATH_REFUSED");
    expect((await refusal("notes/elsewhere/new.txt", { forWrite: true })).code).toBe("PATH_REFUSED");
  });

  it("follows a symlink that stays inside the workspace", async () => {
    symlinkSync(join(workspace, "notes"), join(workspace, "shortcut"), "dir");
    expect(await resolveWorkspacePath(workspace, "shortcut/a.txt")).toBe(join(workspace, "notes", "a.txt"));
  });

  it("refuses a symlink inside the workspace that points at a sensitive name", async () => {
    mkdirSync(join(workspace, ".git"));
    writeFileSync(join(workspace, ".git", "config"), "[core]");
    symlinkSync(join(workspace, ".git"), join(workspace, "repo"), "dir");
    expect((await refusal("repo/config")).message).toContain("sensitive name");
  });

  it("refuses writing through a symlink as the last segment, even one staying inside", async () => {
    symlinkSync(join(workspace, "notes", "a.txt"), join(workspace, "alias.txt"));
    expect(await resolveWorkspacePath(workspace, "alias.txt")).toBe(join(workspace, "notes", "a.txt"));
    expect((await refusal("alias.txt", { forWrite: true })).message).toContain("symlink");
  });

  it("refuses a symlink loop", async () => {
    symlinkSync(join(workspace, "loop-b"), join(workspace, "loop-a"));
    symlinkSync(join(workspace, "loop-a"), join(workspace, "loop-b"));
    expect((await refusal("loop-a/x.txt")).message).toContain("loop");
  });

  it("refuses a dangling symlink, whose destination cannot be checked", async () => {
    symlinkSync(join(outside, "not-yet.txt"), join(workspace, "dangling.txt"));
    expect((await refusal("dangling.txt")).message).toContain("does not exist");
    expect((await refusal("dangling.txt", { forWrite: true })).code).toBe("PATH_REFUSED");
  });

  it("checks against the real path when the workspace itself is reached through a symlink", async () => {
    const alias = join(base, "workspace-alias");
    symlinkSync(workspace, alias, "dir");
    symlinkSync(join(workspace, "notes"), join(workspace, "inside"), "dir");
    expect(await resolveWorkspacePath(alias, "inside/a.txt")).toBe(join(workspace, "notes", "a.txt"));
    symlinkSync(outside, join(workspace, "out"), "dir");
    await expect(resolveWorkspacePath(alias, "out/secret.txt")).rejects.toMatchObject({
      code: "PATH_REFUSED",
    });
  });

  it("reports a missing workspace as FILE_NOT_FOUND", async () => {
    await expect(resolveWorkspacePath(join(base, "missing"), "a.txt")).rejects.toMatchObject({
      code: "FILE_NOT_FOUND",
    });
  });
});

describe("SENSITIVE_PATH_NAMES", () => {
  it("lists the documented credential names and is frozen", () => {
    expect(SENSITIVE_PATH_NAMES).toEqual(
      expect.arrayContaining([".env", ".env.*", ".git", "id_rsa*", "*.pem"]),
    );
    expect(Object.isFrozen(SENSITIVE_PATH_NAMES)).toBe(true);
  });

  it("is what matchSensitivePathName matches against", () => {
    expect(matchSensitivePathName("server.pem")).toBe("*.pem");
    expect(matchSensitivePathName("id_rsa.pub")).toBe("id_rsa*");
    expect(matchSensitivePathName("notes.txt")).toBeUndefined();
  });
});

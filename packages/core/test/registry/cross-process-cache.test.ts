import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RegistryChange, SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/** The child-process script; it imports the built `@skillbox/core` (dist), so run `pnpm build` first. */
const WRITER = fileURLToPath(new URL("../fixtures/registry-writer.mjs", import.meta.url));

type WriterOperation =
  | { op: "register"; skill: SkillRegistration }
  | { op: "setEnabled"; reference: string; owner?: string; enabled: boolean }
  | { op: "unregister"; name: string; version?: string; owner?: string }
  | { op: "unregisterById"; id: string }
  | { op: "execute"; reference: string; handler: string; input?: unknown; owner?: string };

interface WriterLine {
  op: string;
  result: unknown;
}

const children = new Set<ChildProcess>();

/**
 * Runs the writer in a separate Node process against `databasePath` and resolves once it has
 * exited (so every write it made is committed). Operations go on argv, or on stdin with `viaStdin`.
 */
function runWriter(
  databasePath: string,
  operations: readonly WriterOperation[],
  { viaStdin = false } = {},
): Promise<WriterLine[]> {
  const args = viaStdin
    ? [WRITER, databasePath, "-"]
    : [WRITER, databasePath, ...operations.map((op) => JSON.stringify(op))];
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(viaStdin ? JSON.stringify(operations) : undefined);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      children.delete(child);
      if (code !== 0) {
        reject(new Error(`registry-writer exited with ${code ?? signal}: ${stderr}`));
        return;
      }
      resolve(
        stdout
          .trim()
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as WriterLine),
      );
    });
  });
}

function skill(overrides: Partial<SkillRegistration> = {}): SkillRegistration {
  return { name: "x", version: "1.0.0", handler: "x-handler", ...overrides };
}

let host: TemporaryHost;
let changes: RegistryChange[];

beforeEach(() => {
  host = createTemporaryHost();
  changes = [];
  host.registry.on("change", (change) => changes.push(change));
});

afterEach(async () => {
  vi.restoreAllMocks();
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  children.clear();
  await host.dispose();
});

describe("SkillRegistry", () => {
  describe("cache coherence across processes", () => {
    it("serves repeated lookups from the warm cache without reloading", () => {
      host.registry.register(skill());
      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
      const reload = vi.spyOn(host.registry, "loadFromDatabase");

      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
      expect(host.registry.getSkill("x")?.version).toBe("1.0.0");
      expect(host.registry.list()).toHaveLength(1);

      expect(reload).not.toHaveBeenCalled();
    });

    it("sees a version registered by another process on the very next lookup", async () => {
      const first = host.registry.register(skill({ version: "1.0.0" }));
      expect(host.registry.resolveVersion("x")?.id).toBe(first.id);
      expect(host.registry.resolveVersion("x", "^2.0.0")).toBeNull();
      changes.length = 0;
      const reload = vi.spyOn(host.registry, "loadFromDatabase");

      const [line] = await runWriter(host.databasePath, [
        { op: "register", skill: skill({ version: "2.0.0" }) },
      ]);
      const written = line?.result as { id: string; version: string };

      const resolved = host.registry.resolveVersion("x");
      expect(resolved).toMatchObject({ id: written.id, version: "2.0.0" });
      expect(host.registry.resolveVersion("x", "^2.0.0")?.id).toBe(written.id);
      expect(host.registry.getSkill(written.id)?.version).toBe("2.0.0");
      expect(host.registry.getSkillVersions("x").map((entry) => entry.version)).toEqual(["2.0.0", "1.0.0"]);
      expect(reload).toHaveBeenCalledTimes(1);
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("checkForChanges() reports another process's write without a lookup", async () => {
      host.registry.register(skill({ version: "1.0.0" }));
      await new Promise((resolve) => setImmediate(resolve));
      changes.length = 0;

      await runWriter(host.databasePath, [{ op: "register", skill: skill({ version: "3.0.0" }) }]);
      expect(changes).toEqual([]);
      host.registry.checkForChanges();

      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("sees through getSkill a version registered by another process", async () => {
      host.registry.register(skill({ version: "1.0.0" }));
      expect(host.registry.getSkill("x")?.version).toBe("1.0.0");
      changes.length = 0;

      await runWriter(host.databasePath, [{ op: "register", skill: skill({ version: "1.5.0" }) }]);

      expect(host.registry.getSkill("x")?.version).toBe("1.5.0");
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("stops resolving a version disabled by another process", async () => {
      const older = host.registry.register(skill({ version: "1.0.0" }));
      const newer = host.registry.register(skill({ version: "2.0.0" }));
      expect(host.registry.resolveVersion("x")?.id).toBe(newer.id);
      expect(host.registry.resolveVersion("x", "^2.0.0")?.id).toBe(newer.id);
      expect(host.registry.getSkill(newer.id)?.enabled).toBe(true);
      changes.length = 0;

      const [line] = await runWriter(host.databasePath, [
        { op: "setEnabled", reference: "x@2.0.0", enabled: false },
      ]);
      expect(line?.result).toMatchObject({ id: newer.id, enabled: false });

      expect(host.registry.resolveVersion("x")?.id).toBe(older.id);
      expect(host.registry.resolveVersion("x", "^2.0.0")).toBeNull();
      expect(host.registry.resolveVersion("x", "^2.0.0", undefined, { includeDisabled: true })?.id).toBe(
        newer.id,
      );
      expect(host.registry.getSkill(newer.id)?.enabled).toBe(false);
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("resolves a version again once another process re-enables it", async () => {
      const only = host.registry.register(skill({ version: "1.0.0", enabled: false }));
      expect(host.registry.resolveVersion("x")).toBeNull();

      await runWriter(host.databasePath, [{ op: "setEnabled", reference: "x@1.0.0", enabled: true }]);

      expect(host.registry.resolveVersion("x")?.id).toBe(only.id);
    });

    it("forgets a version unregistered by another process", async () => {
      const older = host.registry.register(skill({ version: "1.0.0" }));
      const newer = host.registry.register(skill({ version: "2.0.0" }));
      expect(host.registry.getSkill(newer.id)?.id).toBe(newer.id);
      expect(host.registry.resolveVersion("x")?.id).toBe(newer.id);
      changes.length = 0;

      const [line] = await runWriter(host.databasePath, [{ op: "unregister", name: "x", version: "2.0.0" }]);
      expect(line?.result).toBe(1);

      expect(host.registry.getSkill(newer.id)).toBeUndefined();
      expect(host.registry.resolveVersion("x")?.id).toBe(older.id);
      expect(host.registry.list().map((entry) => entry.id)).toEqual([older.id]);
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("forgets a skill removed by id in another process", async () => {
      const stored = host.registry.register(skill({ apiKeyId: "user-1" }));
      expect(host.registry.resolveVersion("x", undefined, "user-1")?.id).toBe(stored.id);

      await runWriter(host.databasePath, [{ op: "unregisterById", id: stored.id }]);

      expect(host.registry.resolveVersion("x", undefined, "user-1")).toBeNull();
      expect(host.registry.getSkill(stored.id)).toBeUndefined();
    });

    it("applies owner scoping to skills another process registered", async () => {
      host.registry.register(skill({ version: "1.0.0", apiKeyId: "system" }));
      expect(host.registry.resolveVersion("x", undefined, "user-1")?.apiKeyId).toBe("system");

      await runWriter(
        host.databasePath,
        [
          { op: "register", skill: skill({ version: "1.0.0", apiKeyId: "user-1", handler: "mine" }) },
          { op: "register", skill: skill({ version: "9.0.0", apiKeyId: "user-2" }) },
        ],
        { viaStdin: true },
      );

      expect(host.registry.resolveVersion("x", undefined, "user-1")).toMatchObject({
        version: "1.0.0",
        apiKeyId: "user-1",
        handler: "mine",
      });
      expect(host.registry.resolveVersion("x", undefined, "user-3")?.apiKeyId).toBe("system");
      expect(host.registry.resolveVersion("x", undefined, "user-2")?.version).toBe("9.0.0");
    });

    it("does not reload when another process writes only to skill_executions", async () => {
      host.registry.register(skill());
      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
      changes.length = 0;
      const dataVersionBefore = host.database.pragma("data_version", { simple: true }) as number;
      const reload = vi.spyOn(host.registry, "loadFromDatabase");

      const [line] = await runWriter(host.databasePath, [
        { op: "execute", reference: "x", handler: "x-handler", input: { msg: "hi" } },
      ]);
      expect(line?.result).toMatchObject({ status: "success" });

      // The foreign commit is visible on this connection...
      expect(host.database.pragma("data_version", { simple: true })).not.toBe(dataVersionBefore);
      expect(await host.executor.countExecutions()).toBe(1);
      // ...but it did not touch `skills`, so the registry keeps its cache.
      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
      expect(host.registry.getSkill("x")?.version).toBe("1.0.0");
      expect(reload).not.toHaveBeenCalled();
      expect(changes).toEqual([]);

      // A later foreign write to `skills` is still noticed.
      await runWriter(host.databasePath, [{ op: "register", skill: skill({ version: "1.1.0" }) }]);

      expect(host.registry.resolveVersion("x")?.version).toBe("1.1.0");
      expect(reload).toHaveBeenCalledTimes(1);
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("does not report its own writes as external", async () => {
      host.registry.register(skill({ version: "1.0.0" }));
      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
      await runWriter(host.databasePath, [{ op: "register", skill: skill({ name: "other" }) }]);
      expect(host.registry.resolveVersion("other")).not.toBeNull();
      changes.length = 0;

      host.registry.register(skill({ version: "2.0.0" }));

      expect(host.registry.resolveVersion("x")?.version).toBe("2.0.0");
      expect(changes.map((change) => `${change.origin}:${change.kind}`)).toEqual(["local:registered"]);
    });

    it("reports a foreign write that lands after a local write invalidated the cache", async () => {
      host.registry.register(skill({ version: "1.0.0" }));
      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");
      host.registry.register(skill({ version: "1.1.0" }));
      changes.length = 0;

      await runWriter(host.databasePath, [{ op: "register", skill: skill({ version: "2.0.0" }) }]);

      expect(host.registry.resolveVersion("x")?.version).toBe("2.0.0");
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("keeps the writes of both processes when the parent writes while the child runs", async () => {
      host.registry.register(skill({ version: "1.0.0" }));
      expect(host.registry.resolveVersion("x")?.version).toBe("1.0.0");

      const child = runWriter(
        host.databasePath,
        ["2.0.0", "2.1.0", "2.2.0"].map((version) => ({
          op: "register" as const,
          skill: skill({ version }),
        })),
      );
      for (const version of ["1.1.0", "1.2.0", "1.3.0"]) host.registry.register(skill({ version }));
      await child;

      expect(host.registry.getSkillVersions("x").map((entry) => entry.version)).toEqual([
        "2.2.0",
        "2.1.0",
        "2.0.0",
        "1.3.0",
        "1.2.0",
        "1.1.0",
        "1.0.0",
      ]);
      expect(host.registry.resolveVersion("x", "^1.0.0")?.version).toBe("1.3.0");
    });
  });
});

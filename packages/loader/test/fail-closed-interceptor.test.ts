import { fileURLToPath } from "node:url";
import { SkillboxError, type SkillExecution, toCallerExecution } from "@skillbox/core";
import { loadSkills, type SkillLoader, type SkillWatcher, watchSkills } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import type { TreeContent } from "@skillbox/test-helpers/temporary-tree";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextEvent, recordEvents, skillFolder } from "./loader-fixtures.js";

/** The real policy plugin: the test packages re-export it, so its own option checks run. */
const POLICY_MODULE = fileURLToPath(new URL("../../../plugins/policy/index.ts", import.meta.url));

/** A deny-everything policy, as an operator would configure it. */
const DENY_ALL = { default: "deny", rules: [] };

let tree: TemporaryTree;
let host: TemporaryHost;
let loader: SkillLoader | undefined;
let watcher: SkillWatcher | undefined;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.writeFolder("plugins/echo", skillFolder("one"));
  tree.writeFolder("plugins/other", skillFolder("two", { name: "other" }));
  host = createTemporaryHost();
});

afterEach(async () => {
  loader?.close();
  loader = undefined;
  await watcher?.close();
  watcher = undefined;
  await host.dispose();
  tree.cleanup();
});

/** A policy plugin folder: `interceptor.json` with `manifest` over the defaults, and its module. */
function policyFolder(
  manifest: Record<string, unknown>,
  module = `export { default } from ${JSON.stringify(POLICY_MODULE)};\n`,
): Record<string, TreeContent> {
  return {
    "interceptor.json": { name: "policy", handler: "./index.ts", order: -50, options: DENY_ALL, ...manifest },
    "index.ts": module,
  };
}

/** A module that imports a file that is not there (a dependency missing on this host). */
const MISSING_IMPORT = [
  'import { compileRules } from "./rules-compiler.js";',
  `import createPolicyInterceptor from ${JSON.stringify(POLICY_MODULE)};`,
  "export default (options: Record<string, unknown>) => createPolicyInterceptor(compileRules(options));",
  "",
].join("\n");

async function load() {
  const result = await loadSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  loader = result.loader;
  return result;
}

const run = (reference: string) => host.executor.execute(reference, { msg: "hi" });

/** The execution's outcome and the row the audit trail holds for it. */
async function outcome(execution: SkillExecution) {
  const row = await host.executor.getExecution(execution.id);
  return {
    status: execution.status,
    code: execution.error?.code,
    row: row?.status,
    rowCode: row?.error?.code,
  };
}

const REFUSED = {
  status: "denied",
  code: "INTERCEPTOR_UNAVAILABLE",
  row: "denied",
  rowCode: "INTERCEPTOR_UNAVAILABLE",
};

describe("an interceptor plugin that fails to load", () => {
  it("refuses every execution with INTERCEPTOR_UNAVAILABLE when its module imports a missing file, and records it", async () => {
    tree.writeFolder("plugins/policy", policyFolder({}, MISSING_IMPORT));

    const report = await load();

    expect(report.failed).toEqual([
      expect.objectContaining({ root: tree.path("plugins/policy"), code: "HANDLER_INVALID" }),
    ]);
    expect(report.loaded.map((entry) => entry.name).sort()).toEqual(["echo", "other"]);
    const execution = await run("echo");
    expect(await outcome(execution)).toEqual(REFUSED);
    expect(execution.error?.message).toContain('Interceptor "policy" failed to load');
    // The caller is not told the host's paths or the import error: the load report is.
    expect(execution.error?.message).not.toContain(tree.root);
    expect(await outcome(await run("other"))).toEqual(REFUSED);
  });

  it("refuses every execution when its factory throws on the configured options", async () => {
    tree.writeFolder("plugins/policy", policyFolder({ options: { default: "nope" } }));

    const report = await load();

    expect(report.failed).toEqual([
      expect.objectContaining({
        root: tree.path("plugins/policy"),
        file: tree.path("plugins/policy/interceptor.json"),
        message: expect.stringContaining("options"),
      }),
    ]);
    expect(await outcome(await run("echo"))).toEqual(REFUSED);
  });

  it("refuses every execution when its manifest is malformed", async () => {
    tree.writeFolder("plugins/policy", policyFolder({ optoins: DENY_ALL }));

    const report = await load();

    expect(report.failed.map((entry) => entry.code)).toEqual(["MANIFEST_INVALID"]);
    expect(await outcome(await run("echo"))).toEqual(REFUSED);
  });

  it("names a nameless plugin to callers without its folder, which the audit row and load report keep", async () => {
    tree.writeFolder("plugins/pol-badjson", { "interceptor.json": "{ not json", "index.ts": "" });

    const report = await load();

    expect(report.failed).toEqual([
      expect.objectContaining({ root: tree.path("plugins/pol-badjson"), code: "MANIFEST_INVALID" }),
    ]);
    const execution = await run("echo");
    expect(await outcome(execution)).toEqual(REFUSED);
    expect((await host.executor.getExecution(execution.id))?.error?.message).toContain(tree.root);
    const view = toCallerExecution(execution);
    expect(JSON.stringify(view)).not.toContain(tree.root);
    expect(view.error?.message).toContain('Interceptor "interceptor at …/pol-badjson" failed to load');
  });

  it("refuses only what the manifest's `match` names, since the module cannot say", async () => {
    tree.writeFolder("plugins/policy", policyFolder({ match: { names: ["oth*"] } }, MISSING_IMPORT));

    await load();

    expect(await outcome(await run("other"))).toEqual(REFUSED);
    expect((await run("echo")).status).toBe("success");
  });

  for (const names of ["", ["oth*", ""]]) {
    it(`refuses every execution when the manifest's match.names is ${JSON.stringify(names)} (an empty pattern)`, async () => {
      tree.writeFolder("plugins/policy", policyFolder({ match: { names } }, MISSING_IMPORT));

      const report = await load();

      expect(report.failed.map((entry) => entry.code)).toEqual(["MANIFEST_INVALID"]);
      expect(report.failed[0]?.message).toContain("match.names");
      expect(await outcome(await run("echo"))).toEqual(REFUSED);
      expect(await outcome(await run("other"))).toEqual(REFUSED);
    });
  }

  it("refuses every execution when a malformed manifest's match.names is not a list of patterns", async () => {
    tree.writeFolder(
      "plugins/policy",
      policyFolder({ optoins: DENY_ALL, match: { names: ["oth*", 7] } }, MISSING_IMPORT),
    );

    await load();

    expect(await outcome(await run("echo"))).toEqual(REFUSED);
    expect(await outcome(await run("other"))).toEqual(REFUSED);
  });

  it("is not recovered by another interceptor's onError", async () => {
    tree.writeFolder("plugins/policy", policyFolder({}, MISSING_IMPORT));
    await load();
    host.executor.use({
      name: "fallback",
      order: -1000,
      onError: () => ({ output: { reply: "from the fallback", msg: "hi" } }),
    });

    expect(await outcome(await run("echo"))).toEqual(REFUSED);
  });
});

describe("an interceptor plugin under watch", () => {
  async function startWatcher() {
    watcher = watchSkills({
      dirs: [tree.path("plugins")],
      npm: false,
      registry: host.registry,
      executor: host.executor,
    });
    const events = recordEvents(watcher);
    const report = await watcher.ready();
    return { report, events };
  }

  it("replaces the fail-closed stand-in by the real interceptor once the file is fixed", async () => {
    tree.writeFolder("plugins/policy", policyFolder({ options: { default: "nope" } }));
    const { report } = await startWatcher();
    expect(report.failed.map((entry) => entry.root)).toEqual([tree.path("plugins/policy")]);
    expect(await outcome(await run("echo"))).toEqual(REFUSED);

    const loaded = nextEvent(watcher!, "loaded", (entry) => entry.name === "policy");
    tree.write("plugins/policy/interceptor.json", {
      name: "policy",
      handler: "./index.ts",
      order: -50,
      options: { default: "deny", rules: [{ allow: "echo" }] },
    });
    await loaded;

    // The real policy decides now: echo is allowed by its rule, other denied by its default.
    expect((await run("echo")).status).toBe("success");
    const denied = await run("other");
    expect({ status: denied.status, code: denied.error?.code }).toEqual({ status: "denied", code: "DENIED" });
  });

  it("drops the stand-in when the plugin's folder is deleted: nothing is left to guard", async () => {
    tree.writeFolder("plugins/policy", policyFolder({}, MISSING_IMPORT));
    await startWatcher();
    expect(await outcome(await run("echo"))).toEqual(REFUSED);

    const removed = nextEvent(watcher!, "removed", (entry) => entry.root === tree.path("plugins/policy"));
    tree.remove("plugins/policy");
    await removed;

    expect((await run("echo")).status).toBe("success");
  });

  it("keeps the last good version when a loaded interceptor fails to reload", async () => {
    tree.writeFolder(
      "plugins/policy",
      policyFolder({ options: { default: "allow", rules: [{ deny: "other" }] } }),
    );
    const { events } = await startWatcher();
    expect((await run("echo")).status).toBe("success");

    const failed = nextEvent(watcher!, "error", (entry) => entry.root === tree.path("plugins/policy"));
    tree.write("plugins/policy/index.ts", MISSING_IMPORT);
    await failed;

    expect((await run("echo")).status).toBe("success");
    expect((await run("other")).error?.code).toBe("DENIED");
    expect(events.loaded.filter((entry) => entry.name === "policy")).toEqual([]);
  });
});

describe("INTERCEPTOR_UNAVAILABLE", () => {
  it("is never retried", () => {
    expect(new SkillboxError("INTERCEPTOR_UNAVAILABLE", "x").retryable).toBe(false);
  });
});

import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { SkillboxError, toCallerError, toCallerExecution } from "@skillbox/core";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerSkill as register, useTemporaryHosts } from "./executor-test-bed.js";

let tree: TemporaryTree;
const newHost = useTemporaryHosts({ worker: { maxThreads: 1 } });

beforeEach(() => {
  tree = createTemporaryTree("skillbox-caller-view-");
});

afterEach(async () => {
  tree.cleanup();
});

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => [key, ...keysOf(item)]);
}

describe("toCallerExecution", () => {
  it("drops the stack of a HANDLER_ERROR while the audit row keeps it", async () => {
    const host = newHost();
    register(host, { name: "broken" });
    host.executor.registerHandler("broken", () => {
      throw new TypeError("the widget is broken");
    });
    const execution = await host.executor.execute("broken", {});

    const view = toCallerExecution(execution);
    expect(view.error).toMatchObject({
      code: "HANDLER_ERROR",
      message: "broken@1.0.0: the widget is broken",
    });
    expect(view.error?.data).toEqual({ name: "TypeError" });
    expect(JSON.stringify(view)).not.toContain("stack");
    // The stored row (the host's audit trail) keeps the stack for whoever debugs it.
    const stored = await host.executor.getExecution(execution.id);
    expect((stored?.error?.data as { stack?: string } | undefined)?.stack).toContain("the widget is broken");
    // The view is a copy: the record the in-process caller holds is not changed.
    expect((execution.error?.data as { stack?: string } | undefined)?.stack).toContain(
      "the widget is broken",
    );
  });

  it("drops stacks a nested ctx.call carried up and the worker's stack with its host paths", async () => {
    const host = newHost();
    const file = tree.write(
      "handlers/throws.mjs",
      'export default function throws() { throw new Error("deep down"); }\n',
    );
    register(host, { name: "child", handler: pathToFileURL(file).href, runtime: "worker" });
    register(host, { name: "parent", requires: { child: "*" } });
    host.executor.registerHandler("parent", (_input, context) => context.call("child", {}));
    const execution = await host.executor.execute("parent", {});

    expect(execution.error?.code).toBe("HANDLER_ERROR");
    expect(JSON.stringify(execution)).toContain(tree.root);
    const view = toCallerExecution(execution);
    expect(view.error?.data).toMatchObject({ details: { name: "Error" } });
    expect(keysOf(view)).not.toContain("stack");
    expect(JSON.stringify(view)).not.toContain(tree.root);
    expect(JSON.stringify(await host.executor.getExecution(execution.id))).toContain(tree.root);
  });
});

describe("toCallerError", () => {
  it("keeps code, message and data, dropping `stack` at any depth and copying `__proto__` keys as data", () => {
    const data = JSON.parse(
      '{"stack":"at /srv/app.js:1","__proto__":{"stack":"x","kept":1},"list":[{"stack":"y","id":2}]}',
    );
    const error = new SkillboxError("UPSTREAM_ERROR", "the service answered 503", { data });
    expect(toCallerError(error)).toEqual(
      JSON.parse(
        '{"code":"UPSTREAM_ERROR","message":"the service answered 503","data":{"__proto__":{"kept":1},"list":[{"id":2}]}}',
      ),
    );
    expect(toCallerError({ code: "TIMEOUT", message: "too slow" })).toEqual({
      code: "TIMEOUT",
      message: "too slow",
    });
  });

  it("calls a value's toJSON once, as JSON.stringify does, even when it returns the value itself", () => {
    const selfSerialising = {
      stack: "at /srv/app.js:1",
      id: 7,
      toJSON() {
        return this;
      },
    };
    const error = new SkillboxError("UPSTREAM_ERROR", "failed", {
      data: { item: selfSerialising, at: new Date(0) },
    });
    expect(JSON.parse(JSON.stringify(toCallerError(error)))).toEqual({
      code: "UPSTREAM_ERROR",
      message: "failed",
      data: { item: { id: 7 }, at: "1970-01-01T00:00:00.000Z" },
    });
  });
});

describe("HANDLER_ERROR cause", () => {
  it("keeps the code of a plain Error as data.cause.code", async () => {
    const host = newHost();
    register(host, { name: "connects" });
    host.executor.registerHandler("connects", () => {
      throw Object.assign(new Error("connect failed"), { code: "ECONNREFUSED" });
    });
    const execution = await host.executor.execute("connects", {});
    expect(execution.error?.code).toBe("HANDLER_ERROR");
    expect(execution.error?.data).toMatchObject({ cause: { name: "Error", code: "ECONNREFUSED" } });
    expect(toCallerExecution(execution).error?.data).toEqual({
      name: "Error",
      cause: { name: "Error", code: "ECONNREFUSED" },
    });
  });

  it("keeps the codes down an Error's cause chain (fetch's `TypeError: fetch failed`)", async () => {
    const host = newHost();
    register(host, { name: "fetches" });
    host.executor.registerHandler("fetches", () => {
      const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.7:5432"), {
        code: "ECONNREFUSED",
      });
      throw new TypeError("fetch failed", { cause: refused });
    });
    const execution = await host.executor.execute("fetches", {});
    const view = toCallerExecution(execution);
    expect(view.error?.data).toEqual({
      name: "TypeError",
      cause: { name: "TypeError", cause: { name: "Error", code: "ECONNREFUSED" } },
    });
    // The inner message names an internal address: only name and code travel.
    expect(JSON.stringify(view)).not.toContain("10.0.0.7");
  });

  it("keeps the code of an Error thrown in a worker thread", async () => {
    const host = newHost();
    const file = tree.write(
      "handlers/refused.mjs",
      'export default function refused() { throw Object.assign(new Error("no database"), { code: "ECONNREFUSED" }); }\n',
    );
    register(host, { name: "refused", handler: pathToFileURL(file).href, runtime: "worker" });
    const execution = await host.executor.execute("refused", {});
    expect(execution.error?.code).toBe("HANDLER_ERROR");
    expect(toCallerExecution(execution).error?.data).toEqual({
      name: "Error",
      cause: { name: "Error", code: "ECONNREFUSED" },
    });
  });
});

describe("host paths and load failures in the caller view", () => {
  it("answers HANDLER_INVALID of a worker module with a missing import by a fixed message, keeping the full one in the audit row", async () => {
    const host = newHost();
    const file = tree.write(
      "handlers/imports-missing.mjs",
      'import helper from "./missing-file.mjs";\nexport default function imports() { return helper(); }\n',
    );
    register(host, { name: "imports", handler: pathToFileURL(file).href, runtime: "worker" });
    const execution = await host.executor.execute("imports", {});

    expect(execution.error?.code).toBe("HANDLER_INVALID");
    const view = toCallerExecution(execution);
    expect(view.error).toEqual({
      code: "HANDLER_INVALID",
      message: "imports@1.0.0 could not load its handler; the host's log says why",
    });
    expect(JSON.stringify(view)).not.toContain(tree.root);
    // The operator's copy names the file and the missing import.
    const stored = await host.executor.getExecution(execution.id);
    expect(stored?.error?.message).toContain(file);
    expect(stored?.error?.message).toContain("missing-file.mjs");
  });

  it("drops data.file, the module path and Node's Require stack of a HANDLER_INVALID", () => {
    const file = join(tree.root, "imp/index.mjs");
    const error = new SkillboxError(
      "HANDLER_INVALID",
      `${file}: failed to load: Cannot find module './missing-file.mjs'\nRequire stack:\n- ${file}`,
      { data: { file } },
    );
    const view = toCallerError(error, { skill: "imp@1.0.0" });
    expect(view).toEqual({
      code: "HANDLER_INVALID",
      message: "imp@1.0.0 could not load its handler; the host's log says why",
    });
  });

  it("names an interceptor that failed to load without the folder its name was taken from", async () => {
    const host = newHost();
    const name = `interceptor at ${join(tree.root, "plugins/pol-badjson")}`;
    host.executor.use({
      name,
      before() {
        throw new SkillboxError("INTERCEPTOR_UNAVAILABLE", `Interceptor "${name}" failed to load`, {
          data: { interceptor: name, file: join(tree.root, "plugins/pol-badjson/interceptor.json") },
        });
      },
    });
    register(host, { name: "guarded" });
    host.executor.registerHandler("guarded", () => ({}));
    const execution = await host.executor.execute("guarded", {});

    expect(execution.error?.code).toBe("INTERCEPTOR_UNAVAILABLE");
    const view = toCallerExecution(execution);
    expect(view.error).toEqual({
      code: "INTERCEPTOR_UNAVAILABLE",
      message:
        'Interceptor "interceptor at …/pol-badjson" failed to load, so the executions it guards are refused until it loads; the host\'s log says why',
      data: { interceptor: "interceptor at …/pol-badjson" },
    });
    expect((await host.executor.getExecution(execution.id))?.error?.message).toContain(tree.root);
  });

  it("shortens the temp-folder path in the message of an ENOENT a handler threw to its base name", async () => {
    const host = newHost();
    const secret = join(tree.root, "private/secret.txt");
    register(host, { name: "reads" });
    host.executor.registerHandler("reads", () => readFileSync(secret));
    const execution = await host.executor.execute("reads", {});

    expect(execution.error?.message).toContain(secret);
    const view = toCallerExecution(execution);
    expect(view.error?.message).toBe("reads@1.0.0: ENOENT: no such file or directory, open '…/secret.txt'");
    expect(JSON.stringify(view)).not.toContain(tmpdir());
    expect(JSON.stringify(view)).not.toContain(tree.root);
    expect(view.error?.data).toEqual({ name: "Error", cause: { name: "Error", code: "ENOENT" } });
  });

  it("scrubs host paths in data strings and file: URLs, leaving URLs, other paths and plain text alone", () => {
    const inTemp = join(tmpdir(), "skills/echo/index.mjs");
    const error = new SkillboxError(
      "UPSTREAM_ERROR",
      `${pathToFileURL(inTemp).href}:3:7 fetched https://example.com${tmpdir()}/x and /etc/hosts, not ${tmpdir()}files`,
      { data: { where: [`at ${inTemp}`], url: `https://example.com${inTemp}`, count: 2 } },
    );
    expect(toCallerError(error)).toEqual({
      code: "UPSTREAM_ERROR",
      message: `…/index.mjs:3:7 fetched https://example.com${tmpdir()}/x and /etc/hosts, not ${tmpdir()}files`,
      data: { where: ["at …/index.mjs"], url: `https://example.com${inTemp}`, count: 2 },
    });
  });
});

import { pathToFileURL } from "node:url";
import type { SkillboxError } from "@skillbox/core";
import { importSkillModule } from "@skillbox/loader/internal";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// What a handler module may export is defined once (`readHandlerExport` in core's
// handler-module): the loader (inline skills, `skillbox validate`) and worker threads must
// accept the same modules, and refuse the same ones with the same message.

/** Modules the contract accepts, each answering `{ via }` for input `{ msg: "hi" }`. */
const ACCEPTED: [string, string, string][] = [
  [
    "a default-exported function",
    "default-function.mjs",
    "export default function handler(input) { return { via: 'default ' + input.msg }; }\n",
  ],
  [
    "a CommonJS module.exports function",
    "module-exports.cjs",
    "module.exports = (input) => ({ via: 'cjs ' + input.msg });\n",
  ],
  [
    "a defineSkill({...}) default export",
    "define-skill.ts",
    [
      'import { defineSkill } from "@skillbox/core";',
      "export default defineSkill({",
      "  handler: (input: { msg: string }) => ({ via: 'defined ' + input.msg }),",
      "});",
      "",
    ].join("\n"),
  ],
];

/** Modules the contract refuses, with what the message says they exported. */
const REFUSED: [string, string, string, string][] = [
  ["a number", "number.mjs", "export default 42;\n", "got number"],
  ["an array", "array.mjs", "export default [(input) => input];\n", "got an array"],
  [
    "an object that merely has a handler function",
    "plain-object.mjs",
    "export default { handler: (input) => input };\n",
    "got an object with keys handler: export default defineSkill({ handler }), or the handler function itself",
  ],
  [
    "a named handler export without a default",
    "named-handler.mjs",
    "export function handler(input) { return input; }\n",
    "got an object with keys handler: export default defineSkill({ handler }), or the handler function itself",
  ],
  [
    "an object whose handler is not a function",
    "handler-string.mjs",
    'export default { handler: "not a function" };\n',
    "got an object with keys handler",
  ],
];

let tree: TemporaryTree;
let host: TemporaryHost;

beforeAll(() => {
  tree = createTemporaryTree("skillbox-handler-export-");
  host = createTemporaryHost({ worker: { maxThreads: 1 } });
});

afterAll(async () => {
  await host.dispose();
  tree.cleanup();
});

/** Registers `file` as a worker skill named `name`, runs it once and returns the record. */
async function runInWorker(name: string, file: string) {
  host.registry.register({
    name,
    version: "1.0.0",
    apiKeyId: "public",
    handler: pathToFileURL(file).href,
    runtime: "worker",
  });
  return host.executor.execute(name, { msg: "hi" });
}

describe("what a handler module may export, in the loader and in worker threads", () => {
  it.each(ACCEPTED)("both run %s", async (_label, fileName, source) => {
    const file = tree.write(`accepted/${fileName}`, source);

    const loaded = await importSkillModule(file);
    const inline = await loaded.handler({ msg: "hi" }, undefined as never);
    const worker = await runInWorker(`accepted-${fileName.replace(/\W/g, "-")}`, file);

    expect(worker.error).toBeNull();
    expect(worker.output).toEqual(inline);
  });

  it.each(REFUSED)(
    "both refuse %s with HANDLER_INVALID and the same message naming the file and the fix",
    async (_label, fileName, source, got) => {
      const file = tree.write(`refused/${fileName}`, source);

      const loaderError = (await importSkillModule(file).then(
        () => undefined,
        (error: unknown) => error,
      )) as SkillboxError | undefined;
      const worker = await runInWorker(`refused-${fileName.replace(/\W/g, "-")}`, file);

      expect(loaderError?.code).toBe("HANDLER_INVALID");
      expect(loaderError?.message).toBe(
        `${file}: the default export must be a handler function or defineSkill({...}), ${got}`,
      );
      expect(worker.status).toBe("error");
      expect(worker.error?.code).toBe("HANDLER_INVALID");
      expect(worker.error?.message).toBe(loaderError?.message);
      expect(worker.attempts).toBe(1);
    },
  );
});

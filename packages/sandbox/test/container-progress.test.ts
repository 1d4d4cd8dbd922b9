import { pathToFileURL } from "node:url";
import type { Skill } from "@skillbox/core";
import {
  type ContainerRuntime,
  createBwrapProvider,
  createContainerRuntime,
  createPodmanProvider,
  SandboxRunner,
} from "@skillbox/sandbox";
import {
  bwrapRequirement,
  describeWithEngine,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { GRANTED, handBuiltRequest, testSkill } from "@skillbox/test-helpers/runtime-request";
import { createTemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runSandboxJob } from "../src/sandbox-job.js";
import { nodeCommand } from "./isolation-probes.js";
import { PLAIN_SANDBOX_CONFIG, plainSandbox } from "./plain-sandbox.js";

// `ctx.progress()` and `ctx.approval` of a handler in a real podman container, and the progress
// lines of a command skill, against the host-side context of a hand-built runtime request.

const ENGINES = [
  { name: "podman", requirement: podmanRequirement, provider: createPodmanProvider },
  { name: "bwrap", requirement: bwrapRequirement, provider: createBwrapProvider },
];

for (const engine of ENGINES)
  describeWithEngine(
    `ctx.progress and ctx.approval in a sandbox (${engine.name})`,
    engine.requirement(),
    () => {
      const runner = new SandboxRunner({ provider: engine.provider() });
      let runtime: ContainerRuntime;
      let tree: TemporaryTree;

      beforeEach(() => {
        runtime = createContainerRuntime({ runner, defaultImage: TEST_IMAGE });
        tree = createTemporaryTree("skillbox-container-progress-");
      });

      afterEach(async () => {
        await runtime.close?.();
        await runner.killAll();
        tree.cleanup();
      });

      afterAll(() => removeLeftoverContainers());

      /** A handler skill whose module (no imports) is `lines`. */
      function handlerSkill(name: string, ...lines: string[]): Skill {
        const file = tree.write(`${name}/index.mjs`, `${lines.join("\n")}\n`);
        return testSkill(name, { runtime: "container", handler: pathToFileURL(file).href });
      }

      it("hands the handler's reports to the host's context in order, all before the attempt settles", async () => {
        const skill = handlerSkill(
          "steps",
          "export default async function steps(input, ctx) {",
          "  for (let step = 1; step <= input.steps; step++) {",
          '    ctx.progress({ progress: step, total: input.steps, message: "step " + step });',
          "    if (step % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 1));",
          "  }",
          '  console.error("plain stderr stays");',
          "  return { done: true };",
          "}",
        );
        const { request, reports } = handBuiltRequest(skill, { steps: 6 });

        expect(await runtime.run(request)).toEqual({ done: true });

        expect(reports).toEqual(
          [1, 2, 3, 4, 5, 6].map((step) => ({ progress: step, total: 6, message: `step ${step}` })),
        );
      });

      it("stores the latest report on the execution's record, through the executor", async () => {
        const file = tree.write(
          "stored/index.mjs",
          [
            "export default function stored(input, ctx) {",
            '  ctx.progress({ progress: 1, total: 2, message: "half" });',
            '  ctx.progress({ progress: 2, total: 2, message: "all" });',
            "  return 'stored';",
            "}",
          ].join("\n"),
        );
        const host = createTemporaryHost({ runtimes: [runtime] });
        try {
          host.registry.register({
            name: "stored",
            version: "1.0.0",
            apiKeyId: "public",
            handler: pathToFileURL(file).href,
            runtime: "container",
          });

          const execution = await host.executor.execute("stored", {});

          expect(execution.output).toBe("stored");
          expect(execution.progress).toMatchObject({ progress: 2, total: 2, message: "all" });
        } finally {
          await host.dispose();
        }
      });

      it("shows the granted approval as ctx.approval, and null without one", async () => {
        const skill = handlerSkill(
          "approval",
          "export default function approval(input, ctx) {",
          "  return { approval: ctx.approval };",
          "}",
        );
        const granted = handBuiltRequest(skill, {}, { approval: GRANTED });
        const none = handBuiltRequest(skill, {});

        expect(await runtime.run(granted.request)).toEqual({ approval: GRANTED });
        expect(await runtime.run(none.request)).toEqual({ approval: null });
      });

      it("hands malformed reports over as small values, and the handler goes on", async () => {
        const skill = handlerSkill(
          "malformed",
          "export default function malformed(input, ctx) {",
          "  ctx.progress({ progress: NaN });",
          "  ctx.progress({ progress: 1, message: 'x'.repeat(1_000_000) });",
          "  ctx.progress(undefined);",
          "  ctx.progress({ get progress() { throw new Error('a getter throws'); } });",
          "  return 'survived';",
          "}",
        );
        const { request, reports } = handBuiltRequest(skill, {});

        expect(await runtime.run(request)).toBe("survived");

        // JSON has no NaN: it arrives as null, which the host's check refuses.
        expect(reports[0]).toEqual({ progress: null });
        expect((reports[1] as { message: string }).message).toHaveLength(500);
        expect(reports[2]).toBeNull();
        expect((reports[3] as { progress: string }).progress).toContain("a getter throws");
        expect(reports).toHaveLength(4);
      });

      it("bounds a flood from the handler to a burst and the last value", async () => {
        const skill = handlerSkill(
          "flood",
          "export default function flood(input, ctx) {",
          "  for (let step = 1; step <= 100_000; step++) ctx.progress({ progress: step });",
          "  return 'flooded';",
          "}",
        );
        const { request, reports } = handBuiltRequest(skill, {});

        expect(await runtime.run(request)).toBe("flooded");

        const values = reports.map((report) => (report as { progress: number }).progress);
        expect(values.length).toBeLessThanOrEqual(40);
        expect(values.slice(0, 32)).toEqual(Array.from({ length: 32 }, (_, index) => index + 1));
        expect(values.at(-1)).toBe(100_000);
      });

      it("bounds a flood of progress lines printed without the runner, drops an overlong one, and keeps them out of stderr", async () => {
        // A command skill prints straight to stderr: no runner limit applies, only the host's. Its
        // attempt ends when the process exits, after all of stderr was read.
        const script = [
          "const lines = [];",
          'for (let step = 1; step <= 50000; step++) lines.push("\\u001eskillbox:progress " + JSON.stringify({ progress: step }));',
          'process.stderr.write(lines.join("\\n") + "\\n");',
          'process.stderr.write("\\u001eskillbox:progress " + JSON.stringify({ progress: -1, message: "y".repeat(10000) }) + "\\n");',
          'process.stderr.write("\\u001eskillbox:progress not json\\n");',
          'process.stderr.write("plain stderr\\n");',
          'process.stdout.write("\\"flooded\\"");',
        ].join("\n");
        const skill = testSkill("raw", {
          runtime: "container",
          sandbox: { image: TEST_IMAGE, command: nodeCommand(script) },
        });
        const { request, reports, warnings, infos } = handBuiltRequest(skill, {});

        const started = performance.now();
        expect(await runtime.run(request)).toBe("flooded");
        // The burst, then one per 50 ms for as long as the lines kept coming, then the last.
        const bound = 32 + Math.ceil((performance.now() - started) / 50) + 1;

        expect(warnings.filter((warning) => warning.includes("not JSON"))).toHaveLength(1);
        await vi.waitFor(() => expect(infos).toContain("plain stderr"));
        expect(infos.filter((line) => line.includes("skillbox:"))).toEqual([]);
        const values = reports.map((report) => (report as { progress: number }).progress);
        expect(values.length).toBeLessThanOrEqual(bound);
        expect(values).not.toContain(-1);
        expect([...values].sort((a, b) => a - b)).toEqual(values);
        expect(values.at(-1)).toBe(50_000);
      });

      it("stops handing reports on once the attempt is aborted", async () => {
        const skill = handlerSkill(
          "forever",
          "export default async function forever(input, ctx) {",
          "  for (let step = 1; ; step++) {",
          "    ctx.progress({ progress: step });",
          "    await new Promise((resolve) => setTimeout(resolve, 5));",
          "  }",
          "}",
        );
        const attempt = handBuiltRequest(skill, {});
        const settled = runtime.run(attempt.request).catch((error: unknown) => error);
        await vi.waitFor(() => expect(attempt.reports.length).toBeGreaterThanOrEqual(3), { timeout: 20_000 });

        attempt.abort();
        const countAtAbort = attempt.reports.length;
        await settled;
        // Anything the killed sandbox printed before it died has been read by now: its streams closed.
        await runtime.close?.();

        expect(attempt.reports.length).toBe(countAtAbort);
      });

      it("reads the progress lines of a command skill from its stderr, next to its stdout output", async () => {
        const script = [
          'const line = (report) => process.stderr.write("\\u001eskillbox:progress " + JSON.stringify(report) + "\\n");',
          "line({ progress: 1, total: 2 });",
          'process.stderr.write("a log line\\n");',
          'line({ progress: 2, total: 2, message: "done" });',
          "process.stdout.write(JSON.stringify({ answer: 42 }));",
        ].join("\n");
        const skill = testSkill("command", {
          runtime: "container",
          sandbox: { image: TEST_IMAGE, command: nodeCommand(script) },
        });
        const { request, reports } = handBuiltRequest(skill, {});

        expect(await runtime.run(request)).toEqual({ answer: 42 });
        expect(reports).toEqual([
          { progress: 1, total: 2 },
          { progress: 2, total: 2, message: "done" },
        ]);
      });
    },
  );

describe("progress lines that come after the result line", () => {
  it("waits for the reports the result line counts before it settles the attempt", async () => {
    // A plain process in the runner's place (no isolation needed for this): it answers first and
    // prints the two reports its answer counts only afterwards, on stderr, as a pipe may deliver.
    const script = [
      "process.stdout.write('{\"ready\":true}\\n');",
      'process.stdin.resume().on("end", () => {',
      '  process.stdout.write(JSON.stringify({ ok: true, output: "answered", progressReports: 2 }) + "\\n");',
      "  setTimeout(() => {",
      '    process.stderr.write("\\u001eskillbox:progress {\\"progress\\":1}\\n");',
      '    process.stderr.write("\\u001eskillbox:progress {\\"progress\\":2}\\n");',
      "  }, 200);",
      "});",
    ].join("\n");
    const sandbox = plainSandbox("late-reports", script);
    const skill = testSkill("late-reports", { runtime: "container" });
    const { request, reports } = handBuiltRequest(skill, {});
    const plan = { mode: "handler" as const, image: "", command: [], env: {}, config: PLAIN_SANDBOX_CONFIG };

    const output = await runSandboxJob(skill, plan, sandbox, {}, request.context);

    expect(output).toBe("answered");
    expect(reports).toEqual([{ progress: 1 }, { progress: 2 }]);
    await sandbox.result;
  });
});

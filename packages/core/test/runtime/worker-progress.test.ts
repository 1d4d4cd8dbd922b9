import { existsSync } from "node:fs";
import type { SkillLogger } from "@skillbox/core";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GRANTED, handBuiltRequest, workerSkill } from "./runtime-request.js";
import { waitFor } from "./worker-fixture.js";

// `ctx.progress()` and `ctx.approval` of a handler in a real worker thread, against the host-side
// context of a hand-built runtime request (what the executor would pass).

let tree: TemporaryTree;
const runtimes: ReturnType<typeof createWorkerRuntime>[] = [];

beforeEach(() => {
  tree = createTemporaryTree("skillbox-worker-progress-");
});

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close?.();
  tree.cleanup();
});

function newRuntime(maxThreads = 1, logger?: SkillLogger) {
  const runtime = createWorkerRuntime({ maxThreads, ...(logger === undefined ? {} : { logger }) });
  runtimes.push(runtime);
  return runtime;
}

function handler(name: string, ...lines: string[]) {
  return workerSkill(name, tree.write(`handlers/${name}.mjs`, `${lines.join("\n")}\n`));
}

/** Reports 1..input.steps of input.steps, some before and some after an await, then returns. */
const STEPS = [
  'import { setTimeout as sleep } from "node:timers/promises";',
  "export default async function steps(input, ctx) {",
  "  for (let step = 1; step <= input.steps; step++) {",
  '    ctx.progress({ progress: step, total: input.steps, message: "step " + step });',
  "    if (step % 2 === 0) await sleep(1);",
  "  }",
  "  return { done: true };",
  "}",
];

describe("ctx.progress in a worker thread", () => {
  it("hands every report to the host's context, in order with its values, before the attempt settles", async () => {
    const runtime = newRuntime();
    const skill = handler("steps", ...STEPS);
    const { request, reports } = handBuiltRequest(skill, { steps: 5 });

    const output = await runtime.run(request);

    expect(output).toEqual({ done: true });
    // All five are in when run() resolves: none is left to arrive after the attempt ended.
    expect(reports).toEqual(
      [1, 2, 3, 4, 5].map((step) => ({ progress: step, total: 5, message: `step ${step}` })),
    );
  });

  it("hands a synchronous handler's reports over before its result", async () => {
    const runtime = newRuntime();
    const skill = handler(
      "sync",
      "export default function sync(input, ctx) {",
      "  ctx.progress({ progress: 1 });",
      "  ctx.progress({ progress: 2, total: 2 });",
      "  return 'ok';",
      "}",
    );
    for (let round = 0; round < 20; round++) {
      const { request, reports } = handBuiltRequest(skill, {});
      expect(await runtime.run(request)).toBe("ok");
      expect(reports).toEqual([{ progress: 1 }, { progress: 2, total: 2 }]);
    }
  });

  it("keeps the reports of concurrent attempts on several threads apart", async () => {
    const runtime = newRuntime(2);
    const skill = handler("steps", ...STEPS);
    const requests = [3, 4, 5, 6].map((steps) => ({ steps, ...handBuiltRequest(skill, { steps }) }));

    await Promise.all(requests.map(({ request }) => runtime.run(request)));

    for (const { steps, reports } of requests) {
      expect(reports.map((report) => (report as { progress: number }).progress)).toEqual(
        Array.from({ length: steps }, (_, index) => index + 1),
      );
    }
  });

  it("ignores reports made after the attempt ended", async () => {
    const runtime = newRuntime(1);
    const late = handler(
      "late",
      'import { writeFileSync } from "node:fs";',
      "export default function late(input, ctx) {",
      "  ctx.progress({ progress: 1 });",
      "  setTimeout(() => {",
      "    ctx.progress({ progress: 2 });",
      "    writeFileSync(input.marker, '');",
      "  }, 20);",
      "  return 'returned';",
      "}",
    );
    // Runs on the same (only) thread while the late report fires, so that thread's timers run.
    const waiter = handler(
      "waiter",
      'import { existsSync } from "node:fs";',
      'import { setTimeout as sleep } from "node:timers/promises";',
      "export default async function waiter(input, ctx) {",
      "  while (!existsSync(input.marker)) await sleep(5);",
      "  ctx.progress({ progress: 7 });",
      "  return 'waited';",
      "}",
    );
    const marker = tree.path("late-fired");
    const first = handBuiltRequest(late, { marker });
    const second = handBuiltRequest(waiter, { marker });

    expect(await runtime.run(first.request)).toBe("returned");
    expect(await runtime.run(second.request)).toBe("waited");

    expect(existsSync(marker)).toBe(true);
    expect(first.reports).toEqual([{ progress: 1 }]);
    expect(second.reports).toEqual([{ progress: 7 }]);
  });

  it("drops the reports of an aborted attempt from the moment it was aborted", async () => {
    const runtime = newRuntime(1);
    const skill = handler(
      "forever",
      'import { setTimeout as sleep } from "node:timers/promises";',
      "export default async function forever(input, ctx) {",
      "  for (let step = 1; ; step++) {",
      "    ctx.progress({ progress: step });",
      "    await sleep(2);",
      "  }",
      "}",
    );
    const attempt = handBuiltRequest(skill, {});
    const running = runtime.run(attempt.request);
    const settled = running.catch((error: unknown) => error);
    await waitFor(() => attempt.reports.length >= 3, "three reports of the running attempt");

    attempt.abort();
    const countAtAbort = attempt.reports.length;
    await settled;
    // A new attempt on a fresh thread: by its end, anything the old thread had posted was handled.
    const next = handBuiltRequest(handler("steps", ...STEPS), { steps: 2 });
    await runtime.run(next.request);

    expect(attempt.reports.length).toBe(countAtAbort);
    expect(next.reports).toHaveLength(2);
  });

  it("hands malformed reports over as small plain values without failing the handler", async () => {
    const runtime = newRuntime();
    const skill = handler(
      "malformed",
      "export default function malformed(input, ctx) {",
      "  ctx.progress({ progress: NaN });",
      "  ctx.progress({ progress: 1, message: 'x'.repeat(1_000_000) });",
      "  ctx.progress(undefined);",
      "  ctx.progress({ progress: { nested: true }, total: Infinity });",
      "  ctx.progress({ get progress() { throw new Error('a getter throws'); } });",
      "  ctx.progress({ progress: 2, extra: 'not sent' });",
      "  return 'survived';",
      "}",
    );
    const { request, reports } = handBuiltRequest(skill, {});

    expect(await runtime.run(request)).toBe("survived");

    expect(reports).toHaveLength(6);
    expect(reports[0]).toEqual({ progress: Number.NaN });
    expect((reports[1] as { message: string }).message).toHaveLength(500);
    expect(reports[2]).toBeUndefined();
    expect(reports[3]).toEqual({ progress: "[object Object]", total: Number.POSITIVE_INFINITY });
    expect((reports[4] as { progress: string }).progress).toContain("a getter throws");
    expect(reports[5]).toEqual({ progress: 2 });
  });

  it("survives a host context whose progress throws, and logs it", async () => {
    const warnings: string[] = [];
    const logger: SkillLogger = {
      debug() {},
      info() {},
      warn: (message) => warnings.push(message),
      error() {},
    };
    const runtime = newRuntime(1, logger);
    const { request } = handBuiltRequest(handler("steps", ...STEPS), { steps: 2 });
    request.context.progress = () => {
      throw new Error("the host's progress broke");
    };

    await expect(runtime.run(request)).resolves.toEqual({ done: true });
    expect(warnings).toHaveLength(2);
  });

  it("bounds a flood of reports to a burst and the last value", async () => {
    const runtime = newRuntime();
    const skill = handler(
      "flood",
      "export default function flood(input, ctx) {",
      "  for (let step = 1; step <= input.reports; step++) ctx.progress({ progress: step, total: input.reports });",
      "  return 'flooded';",
      "}",
    );
    const { request, reports } = handBuiltRequest(skill, { reports: 200_000 });

    expect(await runtime.run(request)).toBe("flooded");

    const values = reports.map((report) => (report as { progress: number }).progress);
    // The burst (32) at once, then the latest of the rest when the task ended: a synchronous loop
    // never lets the thread's timer run in between.
    expect(values.length).toBeLessThanOrEqual(40);
    expect(values.slice(0, 32)).toEqual(Array.from({ length: 32 }, (_, index) => index + 1));
    expect(values.at(-1)).toBe(200_000);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
  });

  it("keeps sending the latest report at its pace during a long flood", async () => {
    const runtime = newRuntime();
    const skill = handler(
      "paced",
      'import { setTimeout as sleep } from "node:timers/promises";',
      "export default async function paced(input, ctx) {",
      "  let step = 0;",
      "  while (step < input.reports) {",
      "    for (let burst = 0; burst < 1_000; burst++) ctx.progress({ progress: ++step });",
      "    await sleep(1);",
      "  }",
      "  return 'paced';",
      "}",
    );
    const { request, reports } = handBuiltRequest(skill, { reports: 300_000 });

    expect(await runtime.run(request)).toBe("paced");

    const values = reports.map((report) => (report as { progress: number }).progress);
    expect(values.length).toBeGreaterThan(32);
    expect(values.length).toBeLessThan(3_000);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    expect(values.at(-1)).toBe(300_000);
  });

  it("runs a task that never reports as before", async () => {
    const runtime = newRuntime();
    const skill = handler("echo", "export default function echo(input) {", "  return input;", "}");
    const { request, reports } = handBuiltRequest(skill, { value: 41 });

    expect(await runtime.run(request)).toEqual({ value: 41 });
    expect(reports).toEqual([]);
  });
});

describe("ctx.approval in a worker thread", () => {
  const APPROVAL = [
    "export default function approval(input, ctx) {",
    "  return { approval: ctx.approval, keys: Object.keys(ctx).includes('approval') };",
    "}",
  ];

  it("shows the granted approval of the host's context", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(handler("approval", ...APPROVAL), {}, { approval: GRANTED });

    expect(await runtime.run(request)).toEqual({ approval: GRANTED, keys: true });
  });

  it("is null when the execution needed none", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(handler("approval", ...APPROVAL), {});

    expect(await runtime.run(request)).toEqual({ approval: null, keys: true });
  });
});

import type { TreeContent } from "@skillbox/test-helpers/temporary-tree";

/** A skill folder: `skill.json` (name, version 1.0.0, `./index.ts`) plus a handler module with `body`. */
export function skillFolder(manifest: Record<string, unknown>, body: string): Record<string, TreeContent> {
  return {
    "skill.json": { version: "1.0.0", handler: "./index.ts", ...manifest },
    "index.ts": `export default function handler(input: any): unknown {\n  ${body}\n}\n`,
  };
}

/** `echo`: returns `msg` as `echoed`, with one example. */
export function echoFolder(): Record<string, TreeContent> {
  return skillFolder(
    {
      name: "echo",
      description: "Returns the message",
      input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
      output: { type: "object", properties: { echoed: { type: "string" } }, required: ["echoed"] },
      examples: [{ input: { msg: "hi" }, output: { echoed: "hi" } }],
    },
    "return { echoed: input.msg };",
  );
}

/** `boom`: always fails with the code `WEATHER_DOWN`. */
export function boomFolder(): Record<string, TreeContent> {
  return skillFolder(
    { name: "boom", input: { type: "object" }, retry: { maxAttempts: 1 } },
    'throw Object.assign(new Error("the weather station is down"), { name: "SkillboxError", code: "WEATHER_DOWN" });',
  );
}

/**
 * `gated`: holds until the file `input.gate` exists — a run under way for as long as the test
 * needs, without timing. With `progress`, it first reports "step one" (1 of 4).
 */
export function gatedFolder(options: { progress?: boolean } = {}): Record<string, TreeContent> {
  return {
    "skill.json": {
      name: "gated",
      version: "1.0.0",
      handler: "./index.ts",
      input: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
    },
    "index.ts": [
      'import { existsSync } from "node:fs";',
      "export default async function handler(input: { gate: string }, ctx: any): Promise<unknown> {",
      ...(options.progress === true
        ? ['  ctx.progress({ progress: 1, total: 4, message: "step one" });']
        : []),
      "  while (!existsSync(input.gate)) await new Promise((resolve) => setTimeout(resolve, 20));",
      "  return { done: true };",
      "}",
      "",
    ].join("\n"),
  };
}

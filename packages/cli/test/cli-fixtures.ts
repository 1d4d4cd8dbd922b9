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

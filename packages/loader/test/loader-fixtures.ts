import type { SkillLoader, SkillWatcher, SkillWatcherEvents } from "@skillbox/loader";
import type { TreeContent } from "@skillbox/test-helpers/temporary-tree";

/** Every payload a loader or watcher emitted, by event, in order. */
export interface RecordedEvents {
  loaded: SkillWatcherEvents["loaded"][0][];
  reloaded: SkillWatcherEvents["reloaded"][0][];
  removed: SkillWatcherEvents["removed"][0][];
  error: SkillWatcherEvents["error"][0][];
}

type EventName = keyof SkillWatcherEvents;
type Payload<Event extends EventName> = SkillWatcherEvents[Event][0];

/** What both a `SkillLoader` and a `SkillWatcher` offer. */
interface Subscribable {
  on(event: string, listener: (payload: never) => void): unknown;
  off(event: string, listener: (payload: never) => void): unknown;
}

function asSubscribable(source: SkillLoader | SkillWatcher): Subscribable {
  return source as unknown as Subscribable;
}

/**
 * Resolves with the next `event` whose payload satisfies `predicate`. Subscribe *before* causing
 * the change. The timeout only turns a missing event into a readable failure; it never paces a test.
 */
export function nextEvent<Event extends EventName>(
  source: SkillLoader | SkillWatcher,
  event: Event,
  predicate: (payload: Payload<Event>) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<Payload<Event>> {
  const target = asSubscribable(source);
  return new Promise((resolve, reject) => {
    const listener = (payload: Payload<Event>) => {
      if (!predicate(payload)) return;
      clearTimeout(timer);
      target.off(event, listener as (payload: never) => void);
      resolve(payload);
    };
    const timer = setTimeout(() => {
      target.off(event, listener as (payload: never) => void);
      reject(new Error(`no "${event}" event matching the expectation within ${timeoutMs} ms`));
    }, timeoutMs);
    target.on(event, listener as (payload: never) => void);
  });
}

/** Records every `loaded`, `reloaded`, `removed` and `error` event (which also keeps `error` listened to). */
export function recordEvents(source: SkillLoader | SkillWatcher): RecordedEvents {
  const recorded: RecordedEvents = { loaded: [], reloaded: [], removed: [], error: [] };
  const target = asSubscribable(source);
  for (const event of ["loaded", "reloaded", "removed", "error"] as const) {
    target.on(event, ((payload: never) => recorded[event].push(payload)) as (payload: never) => void);
  }
  return recorded;
}

/** The JSON Schema of the test skills' input: `{ msg: string }`. */
export const MESSAGE_INPUT = {
  type: "object",
  properties: { msg: { type: "string" } },
  required: ["msg"],
} as const;

/** A `skill.json` for a skill named `name`, with overrides. */
export function skillManifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "echo",
    version: "1.0.0",
    description: "Replies with a fixed word and the message",
    input: MESSAGE_INPUT,
    handler: "./index.ts",
    ...overrides,
  };
}

/** A TypeScript handler returning `{ reply, msg }`. */
export function replyHandler(reply: string): string {
  return [
    "interface Input { msg: string }",
    `export default function handler(input: Input): { reply: string; msg: string } {`,
    `  return { reply: ${JSON.stringify(reply)}, msg: input.msg };`,
    "}",
    "",
  ].join("\n");
}

/** The files of a skill package (`skill.json` + `index.ts`) that replies with `reply`. */
export function skillFolder(
  reply: string,
  manifest: Record<string, unknown> = {},
  extraFiles: Record<string, TreeContent> = {},
): Record<string, TreeContent> {
  return { "skill.json": skillManifest(manifest), "index.ts": replyHandler(reply), ...extraFiles };
}

/** The files of an interceptor plugin whose `after` hook adds `{ [field]: value }` to outputs. */
export function taggingInterceptorFolder(
  name: string,
  field: string,
  value: string,
  manifest: Record<string, unknown> = {},
): Record<string, TreeContent> {
  return {
    "interceptor.json": { name, handler: "./index.ts", ...manifest },
    "index.ts": [
      'import { defineInterceptor } from "@skillbox/core";',
      "",
      "export default defineInterceptor({",
      `  name: ${JSON.stringify(name)},`,
      "  after(_context, result) {",
      `    return { output: { ...(result.output as object), ${JSON.stringify(field)}: ${JSON.stringify(value)} } };`,
      "  },",
      "});",
      "",
    ].join("\n"),
  };
}

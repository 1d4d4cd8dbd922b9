import type { Message, Part } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";

/** The skill a message asks for and the input to run it with. */
export interface SkillCall {
  /** `name` or `name@range`, as `executor.execute` takes it. */
  reference: string;
  input: unknown;
}

const HOW_TO_CHOOSE =
  'set message.metadata.skill to a skill name ("echo" or "echo@^1") and send the input as one data part, ' +
  'or send one data part {"skill": "echo", "input": {…}}; /.well-known/agent-card.json lists the skills';

/**
 * Reads which skill an A2A message runs and with what input.
 *
 * The skill is `message.metadata.skill` (`"name"` or `"name@range"`); without it, the message
 * must consist of one part — a data part, or a text part holding a JSON object — of the form
 * `{ "skill": "name@range", "input": … }` (`input` defaults to `{}`).
 *
 * With `metadata.skill`, the input is the data part's `data` (text parts beside it are ignored);
 * without a data part, the text parts joined by newlines: a JSON object when the text starts
 * with `{`, else `{ "text": <text> }`; no parts at all is `{}`. File parts, several data parts and
 * text that starts with `{` but is not JSON are refused.
 *
 * Throws the SDK's `RequestMalformedError` (JSON-RPC -32602, "invalid params") with a message
 * saying what to send instead.
 */
export function readSkillCall(message: Message): SkillCall {
  const parts = message.parts ?? [];
  if (parts.some((part) => part.content?.$case === "raw" || part.content?.$case === "url")) {
    throw malformed("file parts are not supported; send the skill input as a data part or as JSON text");
  }
  const dataParts = parts.filter((part) => part.content?.$case === "data");
  if (dataParts.length > 1) {
    throw malformed(`the message has ${dataParts.length} data parts; send the skill input as one data part`);
  }
  const skill = message.metadata?.skill;
  if (skill !== undefined) {
    if (typeof skill !== "string" || skill.trim() === "") {
      throw malformed(`message.metadata.skill must be a skill name such as "echo" or "echo@^1"`);
    }
    return { reference: skill.trim(), input: inputOf(parts, dataParts[0]) };
  }
  const selector = parts.length === 1 ? selectorOf(parts[0]!) : undefined;
  if (selector === undefined)
    throw malformed(`the message does not say which skill to run: ${HOW_TO_CHOOSE}`);
  return selector;
}

function inputOf(parts: Part[], dataPart: Part | undefined): unknown {
  if (dataPart?.content?.$case === "data") return dataPart.content.value ?? {};
  const text = parts
    .flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : []))
    .join("\n");
  if (text.trim() === "") return {};
  return text.trimStart().startsWith("{") ? parseJsonObject(text) : { text };
}

/** `{ skill, input }` from a data part or a JSON text part; undefined when the part is not one. */
function selectorOf(part: Part): SkillCall | undefined {
  let value: unknown;
  if (part.content?.$case === "data") value = part.content.value;
  else if (part.content?.$case === "text" && part.content.value.trimStart().startsWith("{")) {
    value = parseJsonObject(part.content.value);
  }
  if (typeof value !== "object" || value === null || !("skill" in value)) return undefined;
  const { skill, input } = value as { skill: unknown; input?: unknown };
  if (typeof skill !== "string" || skill.trim() === "") {
    throw malformed(`"skill" must be a skill name such as "echo" or "echo@^1"`);
  }
  return { reference: skill.trim(), input: input === undefined ? {} : input };
}

function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw malformed(
      `the text starts with "{" but is not valid JSON (${(error as Error).message}); ` +
        "send the input as a data part, or fix the JSON",
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw malformed("the text must be a JSON object; send the input as a data part");
  }
  return value as Record<string, unknown>;
}

function malformed(message: string): Error {
  return new RequestMalformedError(`Skillbox: ${message}`);
}

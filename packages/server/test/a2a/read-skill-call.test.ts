import { Message } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { readSkillCall } from "../../src/index.js";

function message(parts: Record<string, unknown>[], metadata?: Record<string, unknown>): Message {
  return Message.fromJSON({ messageId: "m", role: "ROLE_USER", parts, metadata });
}

describe("readSkillCall", () => {
  it("takes the skill from metadata.skill and the input from the data part", () => {
    expect(
      readSkillCall(message([{ text: "note" }, { data: { msg: "hi" } }], { skill: " echo@^1 " })),
    ).toEqual({
      reference: "echo@^1",
      input: { msg: "hi" },
    });
  });

  it("reads text as a JSON object when it starts with {, else as { text }, and no parts as {}", () => {
    expect(readSkillCall(message([{ text: ' {"msg": "hi"}' }], { skill: "echo" })).input).toEqual({
      msg: "hi",
    });
    expect(readSkillCall(message([{ text: "line 1" }, { text: "line 2" }], { skill: "echo" })).input).toEqual(
      {
        text: "line 1\nline 2",
      },
    );
    expect(readSkillCall(message([], { skill: "echo" })).input).toEqual({});
  });

  it("takes a lone {skill, input} data part or JSON text part as the call", () => {
    expect(readSkillCall(message([{ data: { skill: "echo", input: { msg: "a" } } }]))).toEqual({
      reference: "echo",
      input: { msg: "a" },
    });
    expect(readSkillCall(message([{ text: '{"skill": "echo"}' }]))).toEqual({ reference: "echo", input: {} });
  });

  it("refuses a message that names no skill, saying how to name one", () => {
    expect(() => readSkillCall(message([{ data: { msg: "a" } }]))).toThrow(/message\.metadata\.skill/);
    expect(() => readSkillCall(message([{ text: "run echo please" }]))).toThrow(/does not say which skill/);
  });

  it("refuses a skill that is not a non-empty string", () => {
    expect(() => readSkillCall(message([], { skill: 42 }))).toThrow(/metadata\.skill must be a skill name/);
    expect(() => readSkillCall(message([{ data: { skill: "" } }]))).toThrow(/"skill" must be a skill name/);
  });

  it("refuses file parts, several data parts and text that starts like JSON but is not", () => {
    expect(() => readSkillCall(message([{ url: "https://example.com/f" }], { skill: "echo" }))).toThrow(
      /file parts/,
    );
    expect(() => readSkillCall(message([{ data: {} }, { data: {} }], { skill: "echo" }))).toThrow(
      /2 data parts/,
    );
    expect(() => readSkillCall(message([{ text: "{oops" }], { skill: "echo" }))).toThrow(/not valid JSON/);
  });
});

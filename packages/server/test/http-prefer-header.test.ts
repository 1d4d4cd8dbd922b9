import { SkillboxError } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { MAX_PREFER_HEADER_LENGTH, parsePreferHeader } from "../src/http/parse-prefer-header.js";

function refusal(header: string): SkillboxError {
  try {
    parsePreferHeader(header);
  } catch (error) {
    if (error instanceof SkillboxError) return error;
    throw error;
  }
  throw new Error(`parsePreferHeader accepted ${JSON.stringify(header)}`);
}

describe("parsePreferHeader", () => {
  it("reads respond-async and wait, ignoring other preferences and their parameters", () => {
    expect(parsePreferHeader(undefined)).toEqual({ respondAsync: false, waitSeconds: undefined });
    expect(parsePreferHeader("respond-async")).toEqual({ respondAsync: true, waitSeconds: undefined });
    expect(parsePreferHeader("Respond-Async, WAIT=10")).toEqual({ respondAsync: true, waitSeconds: 10 });
    expect(parsePreferHeader('return=minimal; foo="a, b;c", respond-async ;x ; y=1,,')).toEqual({
      respondAsync: true,
      waitSeconds: undefined,
    });
    expect(parsePreferHeader('handling=lenient, wait = "5"')).toEqual({
      respondAsync: false,
      waitSeconds: 5,
    });
    expect(parsePreferHeader("")).toEqual({ respondAsync: false, waitSeconds: undefined });
  });

  it("takes the first of a repeated preference (RFC 7240 §2)", () => {
    expect(parsePreferHeader("wait=3, wait=100").waitSeconds).toBe(3);
  });

  it.each([
    ["respond-async=", "respond-async="],
    ["respond-async=yes", '"respond-async" a value'],
    ["wait=soon", '"wait" = "soon"'],
    ["wait", '"wait" without a value'],
    ["wait=-1", "whole number of seconds"],
    ["wait=;", "instead of a value"],
    ['return="minimal', "unterminated"],
    ["=async", "preference name"],
    ["respond async", "after the preference"],
    ["respond-async; =1", "after the preference"],
    ["wait=99999999999", "whole number of seconds"],
  ])("refuses %j as REQUEST_INVALID naming the header", (header, problem) => {
    const error = refusal(header);

    expect(error.code).toBe("REQUEST_INVALID");
    expect(error.message).toContain("`Prefer`");
    expect(error.message).toContain(problem);
    expect(error.data).toEqual({ header: "Prefer" });
  });

  it("refuses a header longer than it reads, before parsing it", () => {
    const header = `respond-async, ${"x".repeat(MAX_PREFER_HEADER_LENGTH)}`;

    expect(refusal(header).message).toContain(`${MAX_PREFER_HEADER_LENGTH}`);
    expect(parsePreferHeader(`respond-async,${" ".repeat(MAX_PREFER_HEADER_LENGTH - 14)}`).respondAsync).toBe(
      true,
    );
  });
});

import { isSkillboxError } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { createHttpRequestSkill, readHttpRequestSettings, resolveHttpRequestSettings } from "../index.ts";

function configError(read: () => unknown) {
  try {
    read();
  } catch (error) {
    if (isSkillboxError(error)) return error;
    throw error;
  }
  throw new Error("expected a CONFIG_INVALID error");
}

describe("readHttpRequestSettings", () => {
  it("defaults to safe methods, no forwarded credentials, 5 MiB, 5 redirects and no private addresses", () => {
    expect(readHttpRequestSettings({})).toEqual({
      allowedMethods: ["GET", "HEAD", "OPTIONS"],
      forwardHeaders: [],
      maxResponseBytes: 5 * 1024 * 1024,
      maxRedirects: 5,
      allowPrivate: [],
    });
  });

  it("reads comma-separated lists and whole numbers, normalising case", () => {
    const settings = readHttpRequestSettings({
      SKILLBOX_HTTP_ALLOWED_METHODS: "get, post ,PATCH",
      SKILLBOX_HTTP_FORWARD_HEADERS: "Authorization,cookie,set-cookie",
      SKILLBOX_HTTP_MAX_RESPONSE_BYTES: "1024",
      SKILLBOX_HTTP_MAX_REDIRECTS: "0",
      SKILLBOX_HTTP_ALLOW_PRIVATE: "127.0.0.1,::1,[::1],10.0.0.0/8,LocalHost",
    });
    expect(settings).toEqual({
      allowedMethods: ["GET", "POST", "PATCH"],
      forwardHeaders: ["authorization", "cookie", "set-cookie"],
      maxResponseBytes: 1024,
      maxRedirects: 0,
      allowPrivate: ["127.0.0.1", "::1", "::1", "10.0.0.0/8", "localhost"],
    });
  });

  it("treats empty variables as unset", () => {
    expect(
      readHttpRequestSettings({ SKILLBOX_HTTP_ALLOWED_METHODS: " ", SKILLBOX_HTTP_MAX_REDIRECTS: "" }),
    ).toMatchObject({
      allowedMethods: ["GET", "HEAD", "OPTIONS"],
      maxRedirects: 5,
    });
  });

  it.each([
    ["SKILLBOX_HTTP_ALLOWED_METHODS", "GET,TRACE", "CONNECT, TRACE or TRACK"],
    ["SKILLBOX_HTTP_ALLOWED_METHODS", "GET,NOT A METHOD", "HTTP method names"],
    ["SKILLBOX_HTTP_FORWARD_HEADERS", "authorization,host", "hop-by-hop"],
    ["SKILLBOX_HTTP_MAX_RESPONSE_BYTES", "5MB", "positive whole number of bytes"],
    ["SKILLBOX_HTTP_MAX_RESPONSE_BYTES", "0", "positive whole number of bytes"],
    ["SKILLBOX_HTTP_MAX_RESPONSE_BYTES", "99999999999", "at most"],
    ["SKILLBOX_HTTP_MAX_REDIRECTS", "-1", "from 0 to 20"],
    ["SKILLBOX_HTTP_MAX_REDIRECTS", "50", "from 0 to 20"],
    ["SKILLBOX_HTTP_ALLOW_PRIVATE", "10.0.0.0/33", "CIDR ranges"],
    ["SKILLBOX_HTTP_ALLOW_PRIVATE", "*.internal", "CIDR ranges"],
  ])("refuses %s=%s with CONFIG_INVALID naming the variable", (name, value, hint) => {
    const error = configError(() => readHttpRequestSettings({ [name]: value }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(name);
    expect(error.message).toContain(hint);
  });
});

describe("resolveHttpRequestSettings", () => {
  it("fills in defaults for omitted options", () => {
    expect(resolveHttpRequestSettings({ maxRedirects: 1 })).toMatchObject({
      maxRedirects: 1,
      maxResponseBytes: 5242880,
    });
  });

  it("refuses invalid options with CONFIG_INVALID naming the option", () => {
    const error = configError(() => resolveHttpRequestSettings({ allowedMethods: [] }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("`allowedMethods`");
  });
});

describe("createHttpRequestSkill", () => {
  it("validates explicit settings when it is created", () => {
    expect(configError(() => createHttpRequestSkill({ maxResponseBytes: -1 })).code).toBe("CONFIG_INVALID");
  });
});

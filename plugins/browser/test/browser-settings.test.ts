import { describe, expect, it } from "vitest";
import {
  DEFAULT_BROWSER_EXECUTABLE,
  readBrowserSettings,
  resolveBrowserSettings,
  settingsSource,
} from "../lib/browser-settings.ts";

describe("readBrowserSettings", () => {
  it("defaults to Debian's Chromium and no allowed host", () => {
    const settings = readBrowserSettings({});
    expect(settings.executablePath).toBe(DEFAULT_BROWSER_EXECUTABLE);
    expect(settings.allowedHosts).toEqual([]);
    expect(settings.workspaceRoot).toBeUndefined();
  });

  it("reads the executable and a comma-separated allowlist, ignoring blanks", () => {
    const settings = readBrowserSettings({
      SKILLBOX_BROWSER_EXECUTABLE: " /opt/chrome/chrome ",
      SKILLBOX_BROWSER_ALLOWED_HOSTS: "example.com, *.example.org ,,127.0.0.1:8080,",
    });
    expect(settings.executablePath).toBe("/opt/chrome/chrome");
    expect(settings.allowedHosts).toEqual(["example.com", "*.example.org", "127.0.0.1:8080"]);
    expect(settings.allowlist.allows("https://a.example.org/")).toBe(true);
  });

  it("refuses non-public addresses unless SKILLBOX_BROWSER_ALLOW_PRIVATE lists them", () => {
    expect(readBrowserSettings({}).addressPolicy.check("intranet", "10.1.2.3")).toMatchObject({
      range: "private",
    });
    const settings = readBrowserSettings({ SKILLBOX_BROWSER_ALLOW_PRIVATE: "10.0.0.0/8, localhost" });
    expect(settings.allowPrivate).toEqual(["10.0.0.0/8", "localhost"]);
    expect(settings.addressPolicy.check("intranet", "10.1.2.3")).toBeUndefined();
    expect(settings.addressPolicy.isHostExempt("localhost")).toBe(true);
    expect(settings.addressPolicy.check("intranet", "192.168.0.1")).toMatchObject({ range: "private" });
    expect(() => readBrowserSettings({ SKILLBOX_BROWSER_ALLOW_PRIVATE: "http://10.0.0.1/" })).toThrow(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringContaining("SKILLBOX_BROWSER_ALLOW_PRIVATE"),
      }),
    );
  });

  it("throws CONFIG_INVALID naming the variable for a malformed host pattern", () => {
    expect(() => readBrowserSettings({ SKILLBOX_BROWSER_ALLOWED_HOSTS: "https://example.com/" })).toThrow(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringContaining("SKILLBOX_BROWSER_ALLOWED_HOSTS"),
      }),
    );
  });
});

describe("resolveBrowserSettings", () => {
  it("throws CONFIG_INVALID naming the option for a wrong type", () => {
    expect(() => resolveBrowserSettings({ executablePath: "" })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining("executablePath") }),
    );
    expect(() => resolveBrowserSettings({ allowedHosts: "example.com" as unknown as string[] })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining("allowedHosts") }),
    );
  });

  it("keeps the workspace root", () => {
    expect(resolveBrowserSettings({ workspaceRoot: "/tmp/workspaces" }).workspaceRoot).toBe(
      "/tmp/workspaces",
    );
  });
});

describe("settingsSource", () => {
  it("reads the environment at each call when no settings are given", () => {
    const source = settingsSource(undefined);
    const saved = process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS;
    try {
      process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = "one.test";
      expect(source().allowedHosts).toEqual(["one.test"]);
      process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = "two.test";
      expect(source().allowedHosts).toEqual(["two.test"]);
    } finally {
      if (saved === undefined) delete process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS;
      else process.env.SKILLBOX_BROWSER_ALLOWED_HOSTS = saved;
    }
  });

  it("validates explicit settings once, when the skill is created", () => {
    expect(() => settingsSource({ allowedHosts: ["bad pattern"] })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID" }),
    );
    expect(settingsSource({ allowedHosts: ["a.test"] })().allowedHosts).toEqual(["a.test"]);
  });
});

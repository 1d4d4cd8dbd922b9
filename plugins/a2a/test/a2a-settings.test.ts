import { afterEach, describe, expect, it } from "vitest";
import { readA2aSettings, resolveA2aSettings } from "../index.ts";
import { parseHostPattern } from "../lib/host-pattern.ts";
import { type SdkAgent, startSdkAgent } from "./helpers/sdk-agent.ts";
import { useSendMessageHost } from "./helpers/send-message-host.ts";

const makeHost = useSendMessageHost();
const agents: SdkAgent[] = [];
const savedEnvironment = { ...process.env };

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  for (const name of Object.keys(process.env)) if (name.startsWith("SKILLBOX_A2A_")) delete process.env[name];
  Object.assign(process.env, savedEnvironment);
});

describe("readA2aSettings", () => {
  it("reads hosts, headers and numbers from the environment, with safe defaults", () => {
    expect(readA2aSettings({})).toEqual({
      allowedHosts: [],
      headers: {},
      maxResponseBytes: 5 * 1024 * 1024,
      pollIntervalMs: 2000,
    });
    expect(
      readA2aSettings({
        SKILLBOX_A2A_ALLOWED_HOSTS: " agent.example.com, *.corp.example:8443 ,,[::1]:9000",
        SKILLBOX_A2A_HEADERS: '{"agent.example.com": {"Authorization": "Bearer t"}}',
        SKILLBOX_A2A_MAX_RESPONSE_BYTES: "1000",
        SKILLBOX_A2A_POLL_INTERVAL_MS: "50",
      }),
    ).toEqual({
      allowedHosts: ["agent.example.com", "*.corp.example:8443", "[::1]:9000"],
      headers: { "agent.example.com": { Authorization: "Bearer t" } },
      maxResponseBytes: 1000,
      pollIntervalMs: 50,
    });
  });

  it("refuses bad values with CONFIG_INVALID naming the variable", () => {
    expect(() => readA2aSettings({ SKILLBOX_A2A_ALLOWED_HOSTS: "http://agent.example.com" })).toThrow(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringContaining("SKILLBOX_A2A_ALLOWED_HOSTS"),
      }),
    );
    expect(() => readA2aSettings({ SKILLBOX_A2A_MAX_RESPONSE_BYTES: "lots" })).toThrow(
      /SKILLBOX_A2A_MAX_RESPONSE_BYTES must be a positive whole number/,
    );
    expect(() => readA2aSettings({ SKILLBOX_A2A_POLL_INTERVAL_MS: "1" })).toThrow(
      /SKILLBOX_A2A_POLL_INTERVAL_MS/,
    );
  });

  it("never quotes a header value in its errors", () => {
    const secret = "Bearer top-secret-token";
    const attempts = [
      `{"agent.example.com": {"Authorization": "${secret}"`,
      `{"agent.example.com": {"Authorization": "${secret}\\nX-Injected: 1"}}`,
      `{"agent.example.com": {"Bad Header": "${secret}"}}`,
      `{"not a host!": {"Authorization": "${secret}"}}`,
    ];
    for (const value of attempts) {
      let message = "";
      try {
        readA2aSettings({ SKILLBOX_A2A_HEADERS: value });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain("SKILLBOX_A2A_HEADERS");
      expect(message).not.toContain("top-secret-token");
    }
  });
});

describe("resolveA2aSettings", () => {
  it("names the option in its errors", () => {
    expect(() => resolveA2aSettings({ allowedHosts: ["bad host"] })).toThrow(/option `allowedHosts`/);
  });
});

describe("parseHostPattern", () => {
  it("matches hosts, subdomain wildcards and ports", () => {
    const match = (pattern: string, url: string) => parseHostPattern(pattern)?.matches(new URL(url));
    expect(match("agent.example.com", "https://Agent.Example.com/x")).toBe(true);
    expect(match("agent.example.com", "http://agent.example.com:8080")).toBe(true);
    expect(match("agent.example.com:443", "https://agent.example.com")).toBe(true);
    expect(match("agent.example.com:443", "http://agent.example.com")).toBe(false);
    expect(match("*.example.com", "https://a.b.example.com")).toBe(true);
    expect(match("*.example.com", "https://example.com")).toBe(false);
    expect(match("*.example.com", "https://badexample.com")).toBe(false);
    expect(match("[::1]:9000", "http://[::1]:9000")).toBe(true);
    expect(match("*", "http://anything:1")).toBe(true);
    expect(parseHostPattern("::1")).toBeUndefined();
    expect(parseHostPattern("host:70000")).toBeUndefined();
  });
});

describe("a2a.send-message (default export)", () => {
  it("reads SKILLBOX_A2A_* at execution time, so a changed environment applies at once", async () => {
    const agent = await startSdkAgent();
    agents.push(agent);
    const host = makeHost("environment");

    delete process.env.SKILLBOX_A2A_ALLOWED_HOSTS;
    const refused = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "one" });
    process.env.SKILLBOX_A2A_ALLOWED_HOSTS = new URL(agent.url).host;
    process.env.SKILLBOX_A2A_HEADERS = JSON.stringify({
      [new URL(agent.url).host]: { Authorization: "Bearer env-token" },
    });
    const allowed = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "two" });

    expect(refused.error?.code).toBe("URL_REFUSED");
    expect(allowed.output).toMatchObject({ state: "completed", text: "TWO" });
    expect(agent.authorizations).toEqual(["Bearer env-token"]);
  });
});

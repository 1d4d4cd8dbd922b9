import { readFileSync } from "node:fs";
import type { SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach } from "vitest";
import { type A2aSettingsOptions, createSendMessageSkill } from "../../index.ts";

/** The skill's manifest, as the loader reads it. */
export const manifest = JSON.parse(
  readFileSync(new URL("../../skill.json", import.meta.url), "utf8"),
) as Omit<SkillRegistration, "handler"> & {
  name: string;
  handler: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
};

/**
 * Registers an `afterEach` disposing every host made by the returned function, which creates a
 * host with `a2a.send-message` registered from its manifest (owner `system`), its handler built
 * with `settings` — or, when `settings` is `"environment"`, the default export's handler, which
 * reads `SKILLBOX_A2A_*` on each call.
 */
export function useSendMessageHost(): (settings: A2aSettingsOptions | "environment") => TemporaryHost {
  const hosts: TemporaryHost[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.dispose();
  });
  return (settings) => {
    const host = createTemporaryHost();
    hosts.push(host);
    host.registry.register({ ...manifest, handler: "a2a-send-message", apiKeyId: "system" });
    const skill = settings === "environment" ? createSendMessageSkill() : createSendMessageSkill(settings);
    host.executor.registerHandler("a2a-send-message", skill.handler);
    return host;
  };
}

import { readFileSync } from "node:fs";
import type { DefinedSkill, SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";

/** skill.json as the loader reads it. */
export interface SkillManifest extends Omit<SkillRegistration, "handler"> {
  name: string;
  version: string;
  handler: string;
}

/** The plugin's manifest. */
export const manifest = JSON.parse(
  readFileSync(new URL("../../skill.json", import.meta.url), "utf8"),
) as SkillManifest;

/** One line a handler logged. */
export interface LoggedLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields: Record<string, unknown> | undefined;
}

/**
 * A temporary host with `skill` registered from skill.json, the way the loader registers the
 * folder, and a logger that records into `logs`. The caller disposes it.
 */
export function createHttpRequestHost(skill: DefinedSkill, logs: LoggedLine[] = []): TemporaryHost {
  const record =
    (level: LoggedLine["level"]) =>
    (message: string, fields?: Record<string, unknown>): void => {
      logs.push({ level, message, fields });
    };
  const host = createTemporaryHost({
    logger: { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") },
  });
  host.registry.register({ ...manifest, handler: "plugin-http-request", apiKeyId: "system" });
  host.executor.registerHandler("plugin-http-request", skill.handler);
  return host;
}

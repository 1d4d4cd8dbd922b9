import { readFileSync } from "node:fs";
import { type DefinedSkill, isDefinedSkill, type SkillRegistration } from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { expect } from "vitest";
import { createExtractSkill } from "../../extract/index.ts";
import { createInteractSkill } from "../../interact/index.ts";
import type { BrowserSettingsInput } from "../../lib/browser-settings.ts";
import { createScreenshotSkill } from "../../screenshot/index.ts";

/** A member's skill.json, as the loader reads it. */
export interface MemberManifest extends Omit<SkillRegistration, "handler"> {
  name: string;
  version: string;
  handler: string;
}

/** The bundle's members: folder name → factory. */
export const MEMBERS = {
  extract: createExtractSkill,
  screenshot: createScreenshotSkill,
  interact: createInteractSkill,
} as const satisfies Record<string, (settings?: BrowserSettingsInput) => DefinedSkill>;

/** Reads `plugins/browser/<member>/skill.json`. */
function readManifest(member: keyof typeof MEMBERS): MemberManifest {
  return JSON.parse(
    readFileSync(new URL(`../../${member}/skill.json`, import.meta.url), "utf8"),
  ) as MemberManifest;
}

/** Expects `skill` to be a defined skill declaring the same schemas as `member`'s skill.json. */
export function expectManifestSchemas(member: keyof typeof MEMBERS, skill: DefinedSkill): void {
  const manifest = readManifest(member);
  expect(isDefinedSkill(skill)).toBe(true);
  expect(skill.input).toMatchObject(manifest.input ?? {});
  expect(skill.output).toMatchObject(manifest.output ?? {});
  expect(manifest.input).toMatchObject(skill.input ?? {});
}

/**
 * A temporary host with the three browser skills registered from their manifests (the way the
 * loader registers a bundle's members), their handlers built with explicit `settings`, or the
 * default exports (settings from the environment) when `settings` is omitted.
 */
export async function createBrowserTestHost(settings?: BrowserSettingsInput): Promise<TemporaryHost> {
  const host = createTemporaryHost();
  for (const [member, factory] of Object.entries(MEMBERS) as [
    keyof typeof MEMBERS,
    typeof createExtractSkill,
  ][]) {
    const manifest = readManifest(member);
    const handlerId = `plugin-browser-${member}`;
    const skill =
      settings === undefined ? (await import(`../../${member}/index.ts`)).default : factory(settings);
    host.registry.register({ ...manifest, handler: handlerId, apiKeyId: "system" });
    host.executor.registerHandler(handlerId, (skill as DefinedSkill).handler);
  }
  return host;
}

import {
  type AddressPolicy,
  createAddressPolicy,
  isAddressEntry,
  normalizeHost,
  SkillboxError,
} from "@skillbox/core/handler";
import { z } from "zod";
import { createHostAllowlist, type HostAllowlist } from "./host-allowlist.js";

/** Where Debian's `chromium` package installs the browser (what `.ci/setup-browser.sh` installs). */
export const DEFAULT_BROWSER_EXECUTABLE = "/usr/bin/chromium";

/** Settings of the browser skills; every field is optional in {@link BrowserSettingsInput}. */
export interface BrowserSettings {
  /** The Chromium (or Chrome) binary Playwright launches. */
  executablePath: string;
  /** Host patterns pages may load from: `example.com`, `*.example.com`, `127.0.0.1:8080`, `*`. */
  allowedHosts: string[];
  /**
   * Host names, IP addresses and CIDR ranges pages may reach although they are loopback, private,
   * link-local or otherwise not public (default none: such addresses are refused even when the
   * allowlist names the host, `*` included).
   */
  allowPrivate: string[];
  /** Root folder of the owners' workspaces (screenshot files); default `SKILLBOX_WORKSPACE_DIR`. */
  workspaceRoot?: string;
}

/** What the skill factories accept; omitted fields take their defaults (not the environment). */
export type BrowserSettingsInput = Partial<BrowserSettings>;

/** Settings after validation, with the allowlist and the address policy compiled. */
export interface ResolvedBrowserSettings extends BrowserSettings {
  allowlist: HostAllowlist;
  /** Refuses non-public addresses not listed in `allowPrivate`. */
  addressPolicy: AddressPolicy;
}

/** How each setting is named in messages: the option and the environment variable behind it. */
const SETTING_NAMES: Record<keyof BrowserSettings, string> = {
  executablePath: "`executablePath` (SKILLBOX_BROWSER_EXECUTABLE)",
  allowedHosts: "`allowedHosts` (SKILLBOX_BROWSER_ALLOWED_HOSTS)",
  allowPrivate: "`allowPrivate` (SKILLBOX_BROWSER_ALLOW_PRIVATE)",
  workspaceRoot: "`workspaceRoot` (SKILLBOX_WORKSPACE_DIR)",
};

const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

const settingsSchema = z.object({
  executablePath: z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .default(DEFAULT_BROWSER_EXECUTABLE),
  allowedHosts: z.array(z.string({ error: "must be a list of strings" })).default([]),
  allowPrivate: z
    .array(
      z
        .string({ error: "must be a list of strings" })
        .refine((entry) => isAddressEntry(normalizeHost(entry)) || HOST_NAME.test(normalizeHost(entry)), {
          error: "must be host names, IP addresses or CIDR ranges such as localhost, 127.0.0.1 or 10.0.0.0/8",
        }),
    )
    .default([]),
  workspaceRoot: z.string({ error: "must be a string" }).min(1, "must not be empty").optional(),
});

function configInvalid(field: keyof BrowserSettings, problem: string): SkillboxError {
  return new SkillboxError(
    "CONFIG_INVALID",
    `browser settings: ${SETTING_NAMES[field]} ${problem}; fix the value (see plugins/browser/README.md)`,
    { data: { setting: field } },
  );
}

/**
 * Validates explicit settings and compiles the host allowlist. A malformed value throws
 * `SkillboxError("CONFIG_INVALID")` naming the setting, its environment variable and the problem.
 */
export function resolveBrowserSettings(input: BrowserSettingsInput = {}): ResolvedBrowserSettings {
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = (issue?.path[0] ?? "executablePath") as keyof BrowserSettings;
    throw configInvalid(field, issue?.message ?? "is invalid");
  }
  const settings = parsed.data;
  let allowlist: HostAllowlist;
  try {
    allowlist = createHostAllowlist(settings.allowedHosts);
  } catch (error) {
    throw configInvalid("allowedHosts", `has a bad entry: ${(error as Error).message}`);
  }
  const resolved: ResolvedBrowserSettings = {
    executablePath: settings.executablePath,
    allowedHosts: settings.allowedHosts,
    allowPrivate: settings.allowPrivate,
    allowlist,
    addressPolicy: createAddressPolicy(settings.allowPrivate),
  };
  if (settings.workspaceRoot !== undefined) resolved.workspaceRoot = settings.workspaceRoot;
  return resolved;
}

/** Splits a comma-separated list, dropping blanks, so `a, b,` is `["a", "b"]`. */
function commaSeparated(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/**
 * Reads the settings from environment variables (called on every execution, so a changed
 * variable applies without a reload):
 *
 * - `SKILLBOX_BROWSER_EXECUTABLE` – the Chromium binary (default `/usr/bin/chromium`);
 * - `SKILLBOX_BROWSER_ALLOWED_HOSTS` – comma-separated host patterns (default none: every URL is refused);
 * - `SKILLBOX_BROWSER_ALLOW_PRIVATE` – comma-separated host names, IP addresses and CIDR ranges
 *   pages may reach although not public (default none: loopback and private ranges are refused);
 * - `SKILLBOX_WORKSPACE_DIR` – read by `ownerWorkspace` itself, so it is not copied here.
 */
export function readBrowserSettings(env: NodeJS.ProcessEnv = process.env): ResolvedBrowserSettings {
  const executable = env.SKILLBOX_BROWSER_EXECUTABLE?.trim();
  return resolveBrowserSettings({
    executablePath: executable ? executable : DEFAULT_BROWSER_EXECUTABLE,
    allowedHosts: commaSeparated(env.SKILLBOX_BROWSER_ALLOWED_HOSTS),
    allowPrivate: commaSeparated(env.SKILLBOX_BROWSER_ALLOW_PRIVATE),
  });
}

/**
 * Returns a function giving the settings in force for one execution: the explicit ones (validated
 * once, now) or, when none are given, the environment read at each call.
 */
export function settingsSource(input: BrowserSettingsInput | undefined): () => ResolvedBrowserSettings {
  if (input === undefined) return () => readBrowserSettings();
  const resolved = resolveBrowserSettings(input);
  return () => resolved;
}

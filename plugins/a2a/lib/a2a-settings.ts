import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";
import { parseHostPattern } from "./host-pattern.js";

/** How the `a2a.send-message` skill is configured. */
export interface A2aSettings {
  /** `host[:port]` patterns of the agents the skill may reach (`*` for any); default none. */
  allowedHosts: string[];
  /**
   * Headers sent to the agents whose host matches a pattern (`host[:port]`, `*.domain`, `*`),
   * such as `{ "agent.example.com": { "Authorization": "Bearer …" } }`; default none. They are
   * secrets: never logged, never in errors, never in the audit trail.
   */
  headers: Record<string, Record<string, string>>;
  /** The most bytes read from one response (agent card or JSON-RPC answer); default 5 MiB. */
  maxResponseBytes: number;
  /** The longest wait between two `tasks/get` polls, in ms (polls start at 100 ms and double); default 2000. */
  pollIntervalMs: number;
}

/** Factory options: any subset of {@link A2aSettings}; the rest take their defaults. */
export type A2aSettingsOptions = Partial<A2aSettings>;

/** The environment variable behind each setting. */
export const A2A_ENVIRONMENT = {
  allowedHosts: "SKILLBOX_A2A_ALLOWED_HOSTS",
  headers: "SKILLBOX_A2A_HEADERS",
  maxResponseBytes: "SKILLBOX_A2A_MAX_RESPONSE_BYTES",
  pollIntervalMs: "SKILLBOX_A2A_POLL_INTERVAL_MS",
} as const satisfies Record<keyof A2aSettings, string>;

const DEFAULTS: A2aSettings = {
  allowedHosts: [],
  headers: {},
  maxResponseBytes: 5 * 1024 * 1024,
  pollIntervalMs: 2000,
};

const PATTERN_HINT =
  'host[:port] patterns such as "agent.example.com", "*.example.com", "127.0.0.1:8080" or "*"';
const hostPattern = z.string().refine((entry) => parseHostPattern(entry) !== undefined, {
  error: `must be ${PATTERN_HINT}`,
});
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const settingsSchema = z.object({
  allowedHosts: z.array(hostPattern),
  headers: z.record(
    hostPattern,
    z.record(
      z.string().regex(headerName, "must map header names (letters, digits, -) to values"),
      // The message never quotes the value: it is a credential.
      z.string({ error: "must map header names to string values" }).regex(/^[^\r\n\0]*$/, {
        error: "must map header names to values without line breaks",
      }),
      { error: 'must map each host pattern to an object of headers, such as {"Authorization": "Bearer …"}' },
    ),
    { error: 'must be a JSON object such as {"agent.example.com": {"Authorization": "Bearer …"}}' },
  ),
  maxResponseBytes: z
    .number({ error: "must be a positive whole number of bytes" })
    .int("must be a positive whole number of bytes")
    .positive("must be a positive whole number of bytes"),
  pollIntervalMs: z
    .number({ error: "must be a whole number of milliseconds from 10 to 60000" })
    .int("must be a whole number of milliseconds from 10 to 60000")
    .min(10, "must be a whole number of milliseconds from 10 to 60000")
    .max(60_000, "must be a whole number of milliseconds from 10 to 60000"),
});

type SettingsField = keyof A2aSettings;

function parseSettings(
  values: Record<SettingsField, unknown>,
  nameOf: (field: SettingsField) => string,
): A2aSettings {
  const result = settingsSchema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const field = issue.path[0] as SettingsField;
  // Only pattern keys are named, never header values.
  const where = field === "headers" && typeof issue.path[1] === "string" ? ` (at "${issue.path[1]}")` : "";
  throw new SkillboxError("CONFIG_INVALID", `a2a.send-message: ${nameOf(field)}${where} ${issue.message}`, {
    data: { setting: nameOf(field) },
  });
}

/** Validates factory options and fills in defaults; invalid values throw `CONFIG_INVALID` naming the option. */
export function resolveA2aSettings(options: A2aSettingsOptions = {}): A2aSettings {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return parseSettings({ ...DEFAULTS, ...defined }, (field) => `option \`${field}\``);
}

/**
 * Reads the settings from the environment: `SKILLBOX_A2A_ALLOWED_HOSTS` (comma-separated
 * patterns), `SKILLBOX_A2A_HEADERS` (a JSON object), `SKILLBOX_A2A_MAX_RESPONSE_BYTES` and
 * `SKILLBOX_A2A_POLL_INTERVAL_MS` (whole numbers). Called on every execution by the default
 * skill, so a changed environment applies without a reload. An invalid value throws
 * `CONFIG_INVALID` naming the variable (and never quoting a header value).
 */
export function readA2aSettings(env: NodeJS.ProcessEnv = process.env): A2aSettings {
  const values: Record<SettingsField, unknown> = { ...DEFAULTS };
  const hosts = env[A2A_ENVIRONMENT.allowedHosts];
  if (hosts !== undefined && hosts.trim() !== "") {
    values.allowedHosts = hosts
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
  }
  const headers = env[A2A_ENVIRONMENT.headers];
  if (headers !== undefined && headers.trim() !== "") values.headers = parseJson(headers);
  for (const field of ["maxResponseBytes", "pollIntervalMs"] as const) {
    const text = env[A2A_ENVIRONMENT[field]]?.trim();
    if (text !== undefined && text !== "") values[field] = /^\d+$/.test(text) ? Number(text) : text;
  }
  return parseSettings(values, (field) => A2A_ENVIRONMENT[field]);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which holds credentials.
    throw new SkillboxError(
      "CONFIG_INVALID",
      `a2a.send-message: ${A2A_ENVIRONMENT.headers} is not valid JSON; it must be an object such as ` +
        '{"agent.example.com": {"Authorization": "Bearer …"}}',
      { data: { setting: A2A_ENVIRONMENT.headers } },
    );
  }
}

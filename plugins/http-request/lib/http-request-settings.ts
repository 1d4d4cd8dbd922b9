import { normalizeHost, SkillboxError } from "@skillbox/core/handler";
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { HOP_BY_HOP_HEADERS } from "./request-headers.js";

/** How the `http-request` skill is configured; every field has a safe default. */
export interface HttpRequestSettings {
  /** Upper-case methods the skill may send (default: the RFC 9110 safe methods GET, HEAD, OPTIONS). */
  allowedMethods: string[];
  /** Lower-case credential headers forwarded from the input (`authorization`, `cookie`, …) plus `set-cookie` to return response cookies; default none. */
  forwardHeaders: string[];
  /** The most response body bytes read (after decompression); default 5 MiB. */
  maxResponseBytes: number;
  /** The most redirects followed for one request; default 5. */
  maxRedirects: number;
  /** Host names, IP addresses and CIDR ranges exempt from the SSRF guard; default none. */
  allowPrivate: string[];
}

/** Factory options: any subset of {@link HttpRequestSettings}; the rest take their defaults. */
export type HttpRequestSettingsOptions = Partial<HttpRequestSettings>;

/** The environment variable behind each setting. */
export const HTTP_REQUEST_ENVIRONMENT = {
  allowedMethods: "SKILLBOX_HTTP_ALLOWED_METHODS",
  forwardHeaders: "SKILLBOX_HTTP_FORWARD_HEADERS",
  maxResponseBytes: "SKILLBOX_HTTP_MAX_RESPONSE_BYTES",
  maxRedirects: "SKILLBOX_HTTP_MAX_REDIRECTS",
  allowPrivate: "SKILLBOX_HTTP_ALLOW_PRIVATE",
} as const satisfies Record<keyof HttpRequestSettings, string>;

const DEFAULTS: HttpRequestSettings = {
  allowedMethods: ["GET", "HEAD", "OPTIONS"],
  forwardHeaders: [],
  maxResponseBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  allowPrivate: [],
};

/** The largest response cap allowed (1 GiB): bodies are held in memory and returned whole. */
export const MAX_RESPONSE_BYTES_CEILING = 1024 * 1024 * 1024;

/** RFC 9110 token characters: what a method or header name may contain. */
export const TOKEN_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
const token = new RegExp(TOKEN_PATTERN);
/** fetch refuses these outright (CONNECT tunnels, TRACE/TRACK echo credentials back). */
const UNSENDABLE_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);
const hostName = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

const methods = z
  .array(z.string().regex(token, "must be HTTP method names such as GET or POST"))
  .min(1, "must name at least one method")
  .transform((list) => list.map((method) => method.toUpperCase()))
  .refine((list) => !list.some((method) => UNSENDABLE_METHODS.has(method)), {
    error: "must not contain CONNECT, TRACE or TRACK (they cannot be sent)",
  });

const forwardHeaders = z
  .array(z.string().regex(token, "must be header names such as authorization or cookie"))
  .transform((list) => list.map((name) => name.toLowerCase()))
  .refine((list) => !list.some((name) => HOP_BY_HOP_HEADERS.has(name)), {
    error: `must not contain hop-by-hop headers (${[...HOP_BY_HOP_HEADERS].join(", ")}); they are always dropped`,
  });

const allowPrivateEntry = z
  .string()
  .transform((entry) => normalizeHost(entry))
  .refine((entry) => ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry) || hostName.test(entry), {
    error: "must be host names, IP addresses or CIDR ranges such as localhost, 127.0.0.1 or 10.0.0.0/8",
  });

const settingsSchema = z.object({
  allowedMethods: methods,
  forwardHeaders,
  maxResponseBytes: z
    .number({ error: "must be a positive whole number of bytes" })
    .int("must be a positive whole number of bytes")
    .positive("must be a positive whole number of bytes")
    .max(MAX_RESPONSE_BYTES_CEILING, `must be at most ${MAX_RESPONSE_BYTES_CEILING} (1 GiB)`),
  maxRedirects: z
    .number({ error: "must be a whole number from 0 to 20" })
    .int("must be a whole number from 0 to 20")
    .min(0, "must be a whole number from 0 to 20")
    .max(20, "must be a whole number from 0 to 20"),
  allowPrivate: z.array(allowPrivateEntry),
});

type SettingsField = keyof HttpRequestSettings;

function invalid(name: string, issue: z.core.$ZodIssue, hint: string): SkillboxError {
  return new SkillboxError("CONFIG_INVALID", `http-request: ${name} ${issue.message}; ${hint}`, {
    data: { setting: name },
  });
}

function parseSettings(values: Record<SettingsField, unknown>, nameOf: (field: SettingsField) => string) {
  const result = settingsSchema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const field = issue.path[0] as SettingsField;
  throw invalid(nameOf(field), issue, `the default is ${JSON.stringify(DEFAULTS[field])}`);
}

/**
 * Validates factory options and fills in defaults. Invalid values throw `CONFIG_INVALID` naming the
 * option and the fix.
 */
export function resolveHttpRequestSettings(options: HttpRequestSettingsOptions = {}): HttpRequestSettings {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return parseSettings({ ...DEFAULTS, ...defined }, (field) => `option \`${field}\``);
}

function list(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/** A whole number, or the raw text so the schema reports it; `undefined` when unset. */
function wholeNumber(value: string | undefined): number | string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  return /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
}

/**
 * Reads the settings from environment variables (comma-separated lists, whole numbers). Called on
 * every execution by the default skill, so a changed environment applies without a reload. An
 * invalid value throws `CONFIG_INVALID` naming the variable.
 */
export function readHttpRequestSettings(env: NodeJS.ProcessEnv = process.env): HttpRequestSettings {
  const raw = {
    allowedMethods: list(env[HTTP_REQUEST_ENVIRONMENT.allowedMethods]),
    forwardHeaders: list(env[HTTP_REQUEST_ENVIRONMENT.forwardHeaders]),
    maxResponseBytes: wholeNumber(env[HTTP_REQUEST_ENVIRONMENT.maxResponseBytes]),
    maxRedirects: wholeNumber(env[HTTP_REQUEST_ENVIRONMENT.maxRedirects]),
    allowPrivate: list(env[HTTP_REQUEST_ENVIRONMENT.allowPrivate]),
  };
  const values = { ...DEFAULTS };
  for (const [field, value] of Object.entries(raw)) {
    if (value !== undefined) Object.assign(values, { [field]: value });
  }
  return parseSettings(values, (field) => HTTP_REQUEST_ENVIRONMENT[field]);
}

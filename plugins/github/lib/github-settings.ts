import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";

/** The public GitHub API; GitHub Enterprise Server lives at `https://<host>/api/v3`. */
const DEFAULT_GITHUB_API_URL = "https://api.github.com";

/** How the GitHub skills reach GitHub. Build it with {@link readGithubSettings} or {@link parseGithubSettings}. */
export interface GithubSettings {
  /** Sent as `Authorization: Bearer …` when set. Never logged, never part of an error or the audit trail. */
  token: string | undefined;
  /** API base URL without a trailing slash, e.g. `https://api.github.com` or `https://ghe.example/api/v3`. */
  apiUrl: string;
  /** Longest rate-limit wait (ms) the skills sit out before failing with `RATE_LIMITED` (0 = never wait). */
  rateLimitMaxWaitMs: number;
  /** The `User-Agent` header GitHub requires. */
  userAgent: string;
  /** How many times `github.commit-activity` asks again while GitHub answers 202 (still computing statistics). */
  statsAttempts: number;
  /** Pause between those attempts (ms). */
  statsRetryDelayMs: number;
}

/** What a factory such as `createIssuesSkill(settings)` accepts: any subset, the rest takes the defaults. */
export type GithubSettingsOptions = Partial<GithubSettings>;

/** Where each setting comes from, so a bad value names what to fix. */
type SettingNames = Record<keyof GithubSettings, string>;

const OPTION_NAMES: SettingNames = {
  token: "github settings `token`",
  apiUrl: "github settings `apiUrl`",
  rateLimitMaxWaitMs: "github settings `rateLimitMaxWaitMs`",
  userAgent: "github settings `userAgent`",
  statsAttempts: "github settings `statsAttempts`",
  statsRetryDelayMs: "github settings `statsRetryDelayMs`",
};

const ENV_NAMES: SettingNames = {
  token: "SKILLBOX_GITHUB_TOKEN (or GITHUB_TOKEN)",
  apiUrl: "SKILLBOX_GITHUB_API_URL",
  rateLimitMaxWaitMs: "SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS",
  userAgent: "SKILLBOX_GITHUB_USER_AGENT",
  statsAttempts: "SKILLBOX_GITHUB_STATS_ATTEMPTS",
  statsRetryDelayMs: "SKILLBOX_GITHUB_STATS_RETRY_DELAY_MS",
};

// Printable ASCII without spaces: anything else could not travel in a header, and fetch's error
// for a bad header value would quote the token. The message deliberately never shows the value.
const tokenSchema = z
  .string({ error: "must be a string" })
  .regex(/^[\x21-\x7e]+$/, "must be a GitHub token without spaces or control characters (value not shown)")
  .optional();

function apiUrlIssue(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an absolute URL such as "${DEFAULT_GITHUB_API_URL}", got ${JSON.stringify(value)}`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return `must use https: (or http:), got ${url.protocol}`;
  if (url.username !== "" || url.password !== "") {
    return "must not carry credentials (user:password@); set the token separately";
  }
  if (url.search !== "" || url.hash !== "") return "must not have a query string or fragment";
  return undefined;
}

const apiUrlSchema = z
  .string({ error: "must be a string" })
  .superRefine((value, context) => {
    const message = apiUrlIssue(value);
    if (message !== undefined) context.addIssue({ code: "custom", message });
  })
  .transform((value) => {
    const url = new URL(value);
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  });

const wholeNumber = (minimum: number, maximum: number) =>
  z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(minimum, `must be at least ${minimum}`)
    .max(maximum, `must be at most ${maximum}`);

const settingsSchema = z.object({
  token: tokenSchema,
  apiUrl: apiUrlSchema.default(DEFAULT_GITHUB_API_URL),
  rateLimitMaxWaitMs: wholeNumber(0, 3_600_000).default(10_000),
  userAgent: z
    .string({ error: "must be a string" })
    .regex(/^[\x20-\x7e]+$/, "must be printable ASCII")
    .default("skillbox-github-skills"),
  statsAttempts: wholeNumber(1, 20).default(4),
  statsRetryDelayMs: wholeNumber(0, 60_000).default(2_000),
});

function parseWith(options: Record<string, unknown>, names: SettingNames): GithubSettings {
  const result = settingsSchema.safeParse(options);
  if (result.success) return { ...result.data, token: result.data.token };
  const issue = result.error.issues[0];
  const field = issue?.path[0] as keyof GithubSettings | undefined;
  const name = field === undefined ? "github settings" : names[field];
  const shown = field === undefined || field === "token" ? "" : `, got ${JSON.stringify(options[field])}`;
  throw new SkillboxError("CONFIG_INVALID", `${name} ${issue?.message ?? "is invalid"}${shown}`, {
    data: { setting: name },
  });
}

/** Validates explicit settings (a factory's argument); missing fields take the defaults, not the environment. */
export function parseGithubSettings(options: GithubSettingsOptions = {}): GithubSettings {
  return parseWith({ ...options }, OPTION_NAMES);
}

function fromEnvironment(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/**
 * Reads the settings from environment variables: the token from `SKILLBOX_GITHUB_TOKEN`, then
 * `GITHUB_TOKEN`; `SKILLBOX_GITHUB_API_URL`, `SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS`,
 * `SKILLBOX_GITHUB_USER_AGENT`, `SKILLBOX_GITHUB_STATS_ATTEMPTS`, `SKILLBOX_GITHUB_STATS_RETRY_DELAY_MS`.
 * Empty variables count as unset. A malformed value throws `CONFIG_INVALID` naming the variable.
 */
export function readGithubSettings(env: NodeJS.ProcessEnv = process.env): GithubSettings {
  const options = {
    token: fromEnvironment(env.SKILLBOX_GITHUB_TOKEN) ?? fromEnvironment(env.GITHUB_TOKEN),
    apiUrl: fromEnvironment(env.SKILLBOX_GITHUB_API_URL),
    rateLimitMaxWaitMs: fromEnvironment(env.SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS),
    userAgent: fromEnvironment(env.SKILLBOX_GITHUB_USER_AGENT),
    statsAttempts: fromEnvironment(env.SKILLBOX_GITHUB_STATS_ATTEMPTS),
    statsRetryDelayMs: fromEnvironment(env.SKILLBOX_GITHUB_STATS_RETRY_DELAY_MS),
  };
  return parseWith(options, ENV_NAMES);
}

import { redactedUrl, SkillboxError } from "@skillbox/core";

/** The forms the distributed settings take, quoted in their errors. */
const POSTGRES_FORM = "postgres://[user[:password]@]host[:port]/database";
const REDIS_FORM = "redis://[user:password@]host[:port][/db] (or rediss:// for TLS)";

const NOT_A_URL = "it is not a URL (escape / @ ? # in the password as %2F %40 %3F %23)";

function parsed(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * Checks a `postgres://` database URL (`source` names where it came from: `--db`, `SKILLBOX_DB`,
 * the file's `database`), so a typo fails with `CONFIG_INVALID` naming the setting instead of as
 * a connection error later.
 */
export function checkPostgresUrl(url: string, source: string): string {
  if (parsed(url) === undefined) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      // Not echoed: a URL that does not parse cannot be redacted reliably, and may hold a password.
      `${source} must be a SQLite file or a URL of the form ${POSTGRES_FORM}; ${NOT_A_URL}`,
      { data: { setting: source } },
    );
  }
  return url;
}

/**
 * Checks the queue's Redis URL (`--queue`, `SKILLBOX_QUEUE`, the file's `queue`): scheme
 * `redis:`/`rediss:`, a host, an optional database number. `CONFIG_INVALID` names the setting
 * and the form expected.
 */
export function checkQueueUrl(url: string, source: string): string {
  // A URL that does not parse is not echoed: it cannot be redacted reliably.
  const fail = (problem: string, echo = true): never => {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `${source} must be a URL of the form ${REDIS_FORM}; ${problem}${echo ? `, got "${redactedUrl(url)}"` : ""}`,
      { data: { setting: source } },
    );
  };
  const queue = parsed(url);
  if (queue === undefined) return fail(NOT_A_URL, false);
  if (queue.protocol !== "redis:" && queue.protocol !== "rediss:") {
    return fail(`the scheme must be redis: or rediss:, not ${queue.protocol}`);
  }
  if (queue.hostname === "") return fail("it names no host");
  if (!/^\/?(\d{1,2})?$/.test(queue.pathname)) return fail("the path must be a database number such as /0");
  return url;
}

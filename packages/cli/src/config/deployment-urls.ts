import { SkillboxError } from "@skillbox/core";

/** The forms the distributed settings take, quoted in their errors. */
const POSTGRES_FORM = "postgres://[user[:password]@]host[:port]/database";
const REDIS_FORM = "redis://[user:password@]host[:port][/db] (or rediss:// for TLS)";

/** Whether a `database` setting names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/**
 * The URL with its password replaced by `***`, for the log and for messages. Written here rather
 * than imported from `@skillbox/distributed`: a SQLite host must not load BullMQ and pg to print
 * its log line.
 */
export function redactedUrl(url: string): string {
  // A user without a password (`postgres://postgres@host`) has nothing to hide.
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/:]*):[^@/]*@/i, "$1$2:***@");
}

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
      `${source} must be a SQLite file or a URL of the form ${POSTGRES_FORM}; it is not a URL, got "${redactedUrl(url)}"`,
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
  const fail = (problem: string): never => {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `${source} must be a URL of the form ${REDIS_FORM}; ${problem}, got "${redactedUrl(url)}"`,
      { data: { setting: source } },
    );
  };
  const queue = parsed(url);
  if (queue === undefined) return fail("it is not a URL");
  if (queue.protocol !== "redis:" && queue.protocol !== "rediss:") {
    return fail(`the scheme must be redis: or rediss:, not ${queue.protocol}`);
  }
  if (queue.hostname === "") return fail("it names no host");
  if (!/^\/?(\d{1,2})?$/.test(queue.pathname)) return fail("the path must be a database number such as /0");
  return url;
}

/** Whether a `database` setting (`SKILLBOX_DB`, `--db`) names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/** Query parameters that carry a secret (libpq reads `password` and `sslpassword` from the query too). */
const SECRET_PARAMETER = /([?&][^=&#]*password=)[^&#]*/gi;

/**
 * A connection URL with its password replaced by `***`, for logs and messages
 * (`postgres://app:***@db:5432/skillbox`). A user without a password has nothing to hide.
 *
 * The user part ends at the LAST `@`: a hand-written password may hold an unescaped `/`, `@`
 * or `?`, and stopping at the first one would print the rest of it. When an `@` sits in the
 * query instead, this hides more than the password, which is the safe way to be wrong.
 * `password=` (and `sslpassword=`) query parameters are hidden too.
 */
export function redactedUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (scheme === null) return url.replace(SECRET_PARAMETER, "$1***");
  const rest = url.slice(scheme[0].length);
  const at = rest.lastIndexOf("@");
  let shown = rest;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const colon = userinfo.indexOf(":");
    // Without a colon there is no password in the user part; a `password=` parameter caught
    // in it is still hidden below.
    if (colon >= 0) shown = `${userinfo.slice(0, colon)}:***${rest.slice(at)}`;
  }
  return `${scheme[0]}${shown}`.replace(SECRET_PARAMETER, "$1***");
}

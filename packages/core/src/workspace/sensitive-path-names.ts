/**
 * File and folder names a workspace path may not contain in any segment, because they usually hold
 * credentials or repository internals: reading them leaks secrets, writing them plants keys or
 * hooks. Matched case-insensitively (macOS and Windows file systems ignore case), `*` stands for any
 * run of characters. Refused by {@link resolveWorkspacePath} with `PATH_REFUSED`.
 *
 * - environment files: `.env`, `.env.*`, `.envrc`
 * - version control internals and credentials: `.git`, `.gitconfig`, `.git-credentials`, `.hg`, `.svn`
 * - key and credential folders: `.ssh`, `.gnupg`, `.aws`, `.azure`, `.gcloud`, `.kube`, `.docker`
 * - credential files: `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.pypirc`, `.netrc`, `_netrc`, `.pgpass`,
 *   `.my.cnf`, `.htpasswd`, `authorized_keys`
 * - private keys and certificates: `id_rsa*`, `id_dsa*`, `id_ecdsa*`, `id_ed25519*`, `*.pem`, `*.key`,
 *   `*.p12`, `*.pfx`, `*.jks`, `*.keystore`
 */
export const SENSITIVE_PATH_NAMES: readonly string[] = Object.freeze([
  ".env",
  ".env.*",
  ".envrc",
  ".git",
  ".gitconfig",
  ".git-credentials",
  ".hg",
  ".svn",
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".gcloud",
  ".kube",
  ".docker",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pypirc",
  ".netrc",
  "_netrc",
  ".pgpass",
  ".my.cnf",
  ".htpasswd",
  "authorized_keys",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.keystore",
]);

function patternToExpression(pattern: string): RegExp {
  const escaped = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  // `u`: case-insensitive by Unicode case folding, as APFS does (the Kelvin sign folds to `k`, so `.\u212Aube` is `.kube`).
  return new RegExp(`^${escaped}$`, "iu");
}

const SENSITIVE_EXPRESSIONS = SENSITIVE_PATH_NAMES.map((pattern) => ({
  pattern,
  expression: patternToExpression(pattern),
}));

/**
 * The entry of {@link SENSITIVE_PATH_NAMES} that one path segment (a single file or folder name,
 * not a whole path) matches, or `undefined` when the name is not sensitive.
 */
export function matchSensitivePathName(name: string): string | undefined {
  // Windows opens the file itself for `name:stream` (an NTFS data stream, `.env::$DATA`), and drops
  // trailing dots and spaces, so `.env.` and `.env ` open `.env` there.
  const withoutStream = name.split(":")[0] ?? name;
  const candidates = [name, withoutStream, name.replace(/[. ]+$/, ""), withoutStream.replace(/[. ]+$/, "")];
  return SENSITIVE_EXPRESSIONS.find((entry) =>
    candidates.some((candidate) => entry.expression.test(candidate)),
  )?.pattern;
}

/** The suffix of an owner id (in `apiKeys` and `SKILLBOX_API_KEYS`) that makes its key an approver key. */
export const APPROVER_SUFFIX = "+approver";

/** What an `apiKeys` value grants its key: the owner it acts as, and whether it may decide approvals. */
export interface ApiKeyGrant {
  owner: string;
  /** May approve and reject the owner's executions that await approval. */
  approver: boolean;
}

/**
 * Reads an `apiKeys` value: `"alice"` is the owner `alice`, `"alice+approver"` the same owner
 * with the approver role. The role rides in the value, not in a new field or separator, so
 * every existing place that holds API keys (`SKILLBOX_API_KEYS`, a config file's
 * `server.apiKeys`, the `apiKeys` option) can carry it unchanged, and an existing owner id —
 * which may contain `:` — keeps its meaning unless it ends in exactly `+approver`.
 */
export function readApiKeyGrant(value: string): ApiKeyGrant {
  if (!value.endsWith(APPROVER_SUFFIX)) return { owner: value, approver: false };
  return { owner: value.slice(0, -APPROVER_SUFFIX.length).trim(), approver: true };
}

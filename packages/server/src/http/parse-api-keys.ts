import { SkillboxError } from "@skillbox/core";
import { APPROVER_SUFFIX, readApiKeyGrant } from "./read-api-key-grant.js";

/**
 * Parses `SKILLBOX_API_KEYS` (`"key1:owner1,key2:owner2"`) into a map of API key → owner id.
 * A key ends at the first `:` (owner ids may contain more); blank entries such as a trailing
 * comma are skipped; an empty text means no keys. An owner ending in `+approver`
 * (`"key3:owner1+approver"`) makes that key an approver key of the owner: the value keeps the
 * suffix, which `createHttpApp` reads. A malformed entry throws a `SkillboxError` with code
 * `API_KEYS_INVALID` naming the entry by position — with only the key's first characters, so
 * the error never prints a whole secret into a log.
 */
export function parseApiKeys(text: string): Record<string, string> {
  const keys = new Map<string, string>();
  const entries = text.split(",");
  entries.forEach((rawEntry, index) => {
    const entry = rawEntry.trim();
    if (entry === "") return;
    const label = `SKILLBOX_API_KEYS entry ${index + 1}${preview(entry)}`;
    const separator = entry.indexOf(":");
    if (separator === -1) {
      throw invalid(`${label} has no owner; write each entry as "key:owner", entries separated by commas`);
    }
    const key = entry.slice(0, separator).trim();
    const owner = entry.slice(separator + 1).trim();
    if (key === "") throw invalid(`${label} has an empty key; write each entry as "key:owner"`);
    if (owner === "") throw invalid(`${label} has an empty owner; write each entry as "key:owner"`);
    if (readApiKeyGrant(owner).owner === "") {
      throw invalid(
        `${label} has an empty owner before "${APPROVER_SUFFIX}"; write an approver key as "key:owner${APPROVER_SUFFIX}"`,
      );
    }
    if (/\s/.test(key))
      throw invalid(`${label}: the key contains whitespace, which a Bearer token cannot carry`);
    if (keys.has(key)) {
      throw invalid(`${label} repeats a key of an earlier entry; every key must map to exactly one owner`);
    }
    keys.set(key, owner);
  });
  // fromEntries defines own properties, so a key such as "__proto__" cannot reach the prototype.
  return Object.fromEntries(keys);
}

function invalid(message: string): SkillboxError {
  return new SkillboxError("API_KEYS_INVALID", message);
}

/**
 * The first characters of an entry, enough to find it in the variable without printing the key;
 * nothing for short entries, where four characters would be most of the key.
 */
function preview(entry: string): string {
  return entry.length <= 8 ? "" : ` ("${entry.slice(0, 4)}…")`;
}

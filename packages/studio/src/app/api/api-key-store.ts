/** Where the API key is kept: this tab's session only (closing the tab forgets it). */
const STORAGE_KEY = "skillbox.studio.apiKey";

/** The caller's API key for this tab, in `sessionStorage`; a store that cannot be read holds none. */
export const apiKeyStore = {
  read(): string | null {
    try {
      return sessionStorage.getItem(STORAGE_KEY);
    } catch {
      return null;
    }
  },
  write(key: string): void {
    sessionStorage.setItem(STORAGE_KEY, key);
  },
  clear(): void {
    try {
      sessionStorage.removeItem(STORAGE_KEY);
    } catch {
      // Nothing stored, nothing to clear.
    }
  },
};

import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api/api-error.js";

/**
 * Asks for the API key (once per tab: it is kept in `sessionStorage`). A key the server refused
 * comes back here with the server's own message.
 */
export function ApiKeyPrompt({
  error,
  onSubmit,
}: {
  error: ApiError | undefined;
  onSubmit: (key: string) => void;
}) {
  const [key, setKey] = useState("");
  const refused = error?.code === "AUTH_INVALID";
  // The prompt replaces the page (a sign-out's button is gone), and a refused key is typed again:
  // the focus goes to the box either way.
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), [error]);
  return (
    <main class="sign-in" id="main">
      <h1>Skillbox Studio</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim() !== "") onSubmit(key.trim());
        }}
      >
        <p>
          This server requires an API key. The Studio shows what that key may see, and keeps the key for this
          tab only.
        </p>
        <label for="api-key">API key</label>
        <input
          ref={input}
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          required
          value={key}
          aria-invalid={refused}
          aria-describedby={refused ? "api-key-error" : undefined}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        {refused ? (
          <p id="api-key-error" class="notice notice-error" role="alert">
            That key was not accepted: {error.message}
          </p>
        ) : null}
        <button type="submit">Open the Studio</button>
      </form>
    </main>
  );
}

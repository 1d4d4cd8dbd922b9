/** Characters of JSON shown before the rest is cut (a 1 MiB output must not freeze the page). */
const MAX_SHOWN = 100_000;

/** A JSON value, pretty-printed and bounded, in a scrollable block. */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? "undefined";
  } catch {
    text = String(value);
  }
  const cut = text.length > MAX_SHOWN;
  return (
    <figure class="json">
      <figcaption>{label}</figcaption>
      <section aria-label={label}>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable block must be reachable by keyboard. */}
        <pre tabIndex={0}>
          {cut ? `${text.slice(0, MAX_SHOWN)}\n… (${text.length - MAX_SHOWN} more characters)` : text}
        </pre>
      </section>
    </figure>
  );
}

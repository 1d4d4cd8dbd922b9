import type { JsonPreview } from "../api/api-types.js";

/** Characters of a body shown in a table cell; the cell's title holds the server's whole preview. */
const SHOWN = 60;

/**
 * The start of a stored JSON body in a table cell (`{"msg":"hi"}`, `{"big":"…` + size), from a
 * listing's preview: the table never fetches whole bodies.
 */
export function JsonPreviewText({ preview }: { preview: JsonPreview | null }) {
  if (preview === null) return <span class="empty">—</span>;
  const cut = preview.truncated || preview.text.length > SHOWN;
  const text = preview.text.length > SHOWN ? preview.text.slice(0, SHOWN) : preview.text;
  return (
    <code class="json-preview" title={preview.text}>
      {text}
      {cut ? `… (${formatBytes(preview.bytes)})` : ""}
    </code>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The `rel="next"` target of a `Link` header (`<https://…?page=2>; rel="next", <…>; rel="last"`),
 * or `undefined` when there is no next page. `rel` may list several relation types.
 */
export function nextLinkOf(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const parameters = match[2] ?? "";
    const rel = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(parameters)?.[1];
    if (rel?.toLowerCase().split(/\s+/).includes("next")) return match[1];
  }
  return undefined;
}

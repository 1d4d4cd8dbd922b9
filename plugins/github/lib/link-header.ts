/** One link: `<target>` and its parameters, a quoted value taken whole (it may hold `,` `;` `<`). */
const LINK = /<([^>]*)>((?:\s*;\s*[^;,="\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,"]*))?)*)/g;
const PARAMETER = /;\s*([^;,="\s]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;,"]*))?/g;

/**
 * The `rel="next"` target of a `Link` header (`<https://…?page=2>; rel="next", <…>; rel="last"`),
 * or `undefined` when there is no next page. `rel` may list several relation types.
 */
export function nextLinkOf(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const link of header.matchAll(LINK)) {
    for (const parameter of (link[2] ?? "").matchAll(PARAMETER)) {
      if (parameter[1]?.toLowerCase() !== "rel") continue;
      const value = (parameter[2] ?? "").trim().replace(/^"(.*)"$/s, "$1");
      if (value.toLowerCase().split(/\s+/).includes("next")) return link[1];
    }
  }
  return undefined;
}

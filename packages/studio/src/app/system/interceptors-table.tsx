import type { InterceptorView } from "../api/api-types.js";

/** Which skills an interceptor applies to, in words. */
function matchText(match: InterceptorView["match"]): string {
  if (match.kind === "all") return "every skill";
  if (match.kind === "predicate") return "skills its code selects";
  // The server sends null for a list the manifest left out.
  const names = match.names ?? [];
  const tags = match.tags ?? [];
  const parts: string[] = [];
  if (names.length > 0) parts.push(`names ${names.join(", ")}`);
  if (tags.length > 0) parts.push(`tags ${tags.join(", ")}`);
  return parts.length === 0 ? "no skill" : parts.join("; ");
}

/**
 * The active interceptors in the order they run on the way in (lower `order` first; the way
 * out is the reverse), with where each comes from and its package's last load error.
 */
export function InterceptorsTable({ interceptors }: { interceptors: InterceptorView[] }) {
  if (interceptors.length === 0) {
    return (
      <p class="empty">
        No interceptor is active. Add a folder with an <code>interceptor.json</code> under{" "}
        <code>plugins/</code> to add one.
      </p>
    );
  }
  return (
    <table aria-label="Interceptors">
      <thead>
        <tr>
          <th scope="col" class="number">
            Order
          </th>
          <th scope="col">Name</th>
          <th scope="col">Hooks</th>
          <th scope="col">Applies to</th>
          <th scope="col">Source</th>
          <th scope="col">Last load error</th>
        </tr>
      </thead>
      <tbody>
        {interceptors.map((interceptor, position) => (
          <tr key={`${position}-${interceptor.name}`} data-interceptor={interceptor.name}>
            <td class="number">{interceptor.order}</td>
            <th scope="row">{interceptor.name}</th>
            <td>
              {interceptor.hooks.length === 0
                ? "—"
                : interceptor.hooks.map((hook) => (
                    <span key={hook} class="tag">
                      {hook}
                    </span>
                  ))}
            </td>
            <td>{matchText(interceptor.match)}</td>
            <td>
              {interceptor.source.kind === "package" ? (
                <>
                  package <code>{interceptor.source.package ?? interceptor.name}</code>
                </>
              ) : (
                "host code"
              )}
            </td>
            <td>
              {interceptor.lastLoadError === null ? (
                "—"
              ) : (
                <div class="system-load-error" data-load-error>
                  <span aria-hidden="true">✕ </span>
                  <strong>Failed to load</strong> <code>{interceptor.lastLoadError.file}</code>:{" "}
                  {interceptor.lastLoadError.message}{" "}
                  <code class="error-code">{interceptor.lastLoadError.code}</code>
                </div>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

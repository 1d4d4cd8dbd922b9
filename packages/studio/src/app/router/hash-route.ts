import { useEffect, useState } from "preact/hooks";

/** Where the Studio is: the path after `#` split into segments, and its query. */
export interface Route {
  /** `/executions/abc` → `["executions", "abc"]` (decoded); `[]` for the start page. */
  segments: string[];
  query: URLSearchParams;
}

/**
 * Routes live in the URL's fragment (`#/executions?status=error`): the server serves one
 * `index.html` and never needs to know the Studio's pages, and every view is a link to share.
 */
function readRoute(hash: string = location.hash): Route {
  const text = hash.startsWith("#") ? hash.slice(1) : hash;
  const questionMark = text.indexOf("?");
  const path = questionMark === -1 ? text : text.slice(0, questionMark);
  const search = questionMark === -1 ? "" : text.slice(questionMark + 1);
  const segments = path
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
  return { segments, query: new URLSearchParams(search) };
}

/** The `href` of a Studio page: `href(["skills", "@acme/weather"], { tab: "runs" })`. */
export function href(segments: readonly string[], query: Record<string, string | undefined> = {}): string {
  const path = segments.map((segment) => encodeURIComponent(segment)).join("/");
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== "") search.set(name, value);
  const text = search.toString();
  return `#/${path}${text === "" ? "" : `?${text}`}`;
}

/** Goes to a page; `replace` rewrites the current history entry (filters typed into a form). */
export function navigate(target: string, options: { replace?: boolean } = {}): void {
  if (options.replace === true) {
    history.replaceState(null, "", target);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    location.hash = target.startsWith("#") ? target.slice(1) : target;
  }
}

/** The current route, re-rendering on every change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => readRoute());
  useEffect(() => {
    const update = () => setRoute(readRoute());
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return route;
}

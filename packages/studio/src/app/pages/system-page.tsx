import { useEffect } from "preact/hooks";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import type { Route } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";
import { InterceptorsTable } from "../system/interceptors-table.js";
import { SandboxRuntimes } from "../system/sandboxes-section.js";
import "../system/system.css";
import { ApiContent } from "../components/api-content.js";

/** Pools change with every execution and no event says so: they are read again this often. */
const POOL_REFRESH_MS = 5000;

/** The active interceptors in order, and the sandbox runtimes with their pools, kept current. */
export function SystemPage(_props: { route: Route }) {
  usePageTitle("Interceptors & sandboxes");
  const { api } = useStudio();
  const interceptors = useApi((signal) => api.listInterceptors(signal), [api]);
  const sandbox = useApi((signal) => api.sandbox(signal), [api]);

  const reloadInterceptors = useCoalesced(interceptors.reload);
  // `lagged` can come with every event of a storm: one read per burst, not one per notice.
  const reloadSandbox = useCoalesced(sandbox.reload);
  useLiveEvent((event) => {
    if (event.type === "resync" || event.type === "lagged") {
      reloadInterceptors();
      reloadSandbox();
    } else if (event.type === "activity") {
      const { activity } = event;
      // A load error names a file, not a kind: it may be an interceptor's, whose row shows it.
      if (
        activity.type === "load-error" ||
        (activity.type !== "warning" && activity.package.kind === "interceptor")
      )
        reloadInterceptors();
    }
  });
  const refreshPools = sandbox.reload;
  useEffect(() => {
    const timer = setInterval(refreshPools, POOL_REFRESH_MS);
    return () => clearInterval(timer);
  }, [refreshPools]);

  return (
    <section>
      <h1>Interceptors & sandboxes</h1>
      <section aria-labelledby="interceptors-heading">
        <h2 id="interceptors-heading">Interceptors</h2>
        <p class="field-hint">
          In the order they run before an execution (lower order first); after it, the reverse.
        </p>
        <ApiContent state={interceptors} failure="The interceptors cannot be read">
          {(data) => <InterceptorsTable interceptors={data} />}
        </ApiContent>
      </section>
      <section aria-labelledby="sandboxes-heading">
        <h2 id="sandboxes-heading">Sandboxes</h2>
        <p class="field-hint">
          Where skills run, and their pools of ready workers and warm sandboxes (every 5 s).
        </p>
        <ApiContent state={sandbox} failure="The sandboxes cannot be read">
          {(data) => <SandboxRuntimes sandbox={data} />}
        </ApiContent>
      </section>
    </section>
  );
}

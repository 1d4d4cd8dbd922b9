import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { activityFeed } from "./activity/activity-feed.js";
import { ApiClient } from "./api/api-client.js";
import { type ApiError, isApiError } from "./api/api-error.js";
import { apiKeyStore } from "./api/api-key-store.js";
import type { CallerView } from "./api/api-types.js";
import { ApiKeyPrompt } from "./components/api-key-prompt.js";
import { ErrorNotice } from "./components/error-notice.js";
import { LiveEvents, type LiveState } from "./live/live-events.js";
import { ActivityPage } from "./pages/activity-page.js";
import { ApprovalsPage } from "./pages/approvals-page.js";
import { ChartsPage } from "./pages/charts-page.js";
import { ExecutionPage } from "./pages/execution-page.js";
import { ExecutionsPage } from "./pages/executions-page.js";
import { SkillPage } from "./pages/skill-page.js";
import { SkillsPage } from "./pages/skills-page.js";
import { SystemPage } from "./pages/system-page.js";
import { href, type Route, useRoute } from "./router/hash-route.js";
import { type Studio, StudioContext } from "./studio-context.js";

type Session =
  | { state: "checking" }
  | { state: "key-needed"; error: ApiError | undefined }
  | { state: "failed"; error: ApiError }
  | { state: "ready"; caller: CallerView };

/** The Studio: asks for an API key when the server wants one, then shows the dashboard. */
export function App() {
  const api = useMemo(() => new ApiClient({ apiKey: () => apiKeyStore.read() }), []);
  const [session, setSession] = useState<Session>({ state: "checking" });

  const signIn = useCallback(async () => {
    try {
      setSession({ state: "ready", caller: await api.caller() });
    } catch (error) {
      if (!isApiError(error)) throw error;
      if (error.unauthorized) {
        // A key this tab kept is forgotten once refused; the prompt says why.
        if (error.code === "AUTH_INVALID") apiKeyStore.clear();
        setSession({ state: "key-needed", error: error.code === "AUTH_INVALID" ? error : undefined });
      } else {
        setSession({ state: "failed", error });
      }
    }
  }, [api]);

  useEffect(() => {
    void signIn();
  }, [signIn]);

  // Stable: the dashboard's live stream is made for it, and a new one would reconnect.
  const signOut = useCallback((error?: ApiError) => {
    apiKeyStore.clear();
    setSession({ state: "key-needed", error });
  }, []);

  if (session.state === "checking") return <p class="loading">Connecting to the Skillbox server…</p>;
  if (session.state === "key-needed") {
    return (
      <ApiKeyPrompt
        error={session.error}
        onSubmit={(key) => {
          apiKeyStore.write(key);
          void signIn();
        }}
      />
    );
  }
  if (session.state === "failed") {
    return (
      <main id="main" class="sign-in">
        <h1>Skillbox Studio</h1>
        <ErrorNotice error={session.error} title="The server cannot be reached" />
        <button type="button" onClick={() => void signIn()}>
          Try again
        </button>
      </main>
    );
  }
  return <Dashboard api={api} caller={session.caller} onSignOut={signOut} />;
}

const NAVIGATION: Array<{ segment: string; label: string }> = [
  { segment: "skills", label: "Skills" },
  { segment: "executions", label: "Executions" },
  { segment: "approvals", label: "Approvals" },
  { segment: "activity", label: "Activity" },
  { segment: "charts", label: "Charts" },
  { segment: "system", label: "Interceptors & sandboxes" },
];

function Dashboard(props: { api: ApiClient; caller: CallerView; onSignOut: (error?: ApiError) => void }) {
  const { api, caller, onSignOut } = props;
  const route = useRoute();
  const [announcement, setAnnouncement] = useState("");
  const live = useMemo(
    () => new LiveEvents(api, { onUnauthorized: (error) => onSignOut(error) }),
    [api, onSignOut],
  );
  // The loader's activity has no history: the feed collects from sign-in, whatever page is shown.
  useEffect(() => activityFeed.follow(live), [live]);
  const [liveState, setLiveState] = useState<LiveState>(live.state);
  useEffect(() => {
    const stopListening = live.onState(setLiveState);
    live.start();
    return () => {
      stopListening();
      live.stop();
    };
  }, [live]);

  const studio = useMemo<Studio>(
    () => ({ api, live, caller, announce: setAnnouncement }),
    [api, live, caller],
  );
  const section = route.segments[0] ?? "skills";
  const main = useRef<HTMLElement>(null);
  // A new page moves the focus to it, as a page load would (screen readers start reading there).
  const pageKey = route.segments.join("/");
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    main.current?.focus();
  }, [pageKey]);

  return (
    <StudioContext.Provider value={studio}>
      {/* A button, not a link: a `#main` link would be a route in the fragment. */}
      <button type="button" class="skip-link" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top-bar">
        <a class="brand" href={href(["skills"])}>
          Skillbox Studio
        </a>
        <nav aria-label="Studio">
          <ul>
            {NAVIGATION.map((item) => (
              <li key={item.segment}>
                <a href={href([item.segment])} aria-current={section === item.segment ? "page" : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="session">
          <span class={`live live-${liveState}`} data-live={liveState}>
            <span aria-hidden="true">{liveState === "live" ? "●" : "○"}</span> {LIVE_LABELS[liveState]}
          </span>
          <span class="caller">
            {caller.owner}
            {caller.approver ? " · approver" : ""}
          </span>
          {caller.apiKeysConfigured ? (
            <button type="button" class="link-button" onClick={() => onSignOut()}>
              Change key
            </button>
          ) : null}
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page route={route} />
      </main>
      <div class="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </div>
    </StudioContext.Provider>
  );
}

const LIVE_LABELS: Record<LiveState, string> = {
  connecting: "Connecting",
  live: "Live",
  reconnecting: "Reconnecting",
  stopped: "Offline",
};

function Page({ route }: { route: Route }) {
  const [section = "skills", id] = route.segments;
  switch (section) {
    case "skills":
      return id === undefined ? <SkillsPage route={route} /> : <SkillPage route={route} name={id} />;
    case "executions":
      return id === undefined ? <ExecutionsPage route={route} /> : <ExecutionPage route={route} id={id} />;
    case "approvals":
      return <ApprovalsPage route={route} />;
    case "activity":
      return <ActivityPage route={route} />;
    case "charts":
      return <ChartsPage route={route} />;
    case "system":
      return <SystemPage route={route} />;
    default:
      return (
        <section>
          <h1>Page not found</h1>
          <p>
            There is no Studio page <code>{location.hash}</code>.{" "}
            <a href={href(["skills"])}>Go to the skills</a>.
          </p>
        </section>
      );
  }
}

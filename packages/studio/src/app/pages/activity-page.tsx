import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ACTIVITY_FEED_LIMIT } from "../activity/activity-feed.js";
import {
  ACTIVITY_LABELS,
  ACTIVITY_TYPES,
  ActivityItem,
  type ActivityType,
  activityText,
} from "../activity/activity-item.js";
import { useActivityFeed } from "../activity/use-activity-feed.js";
import { formatTime } from "../format.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import type { Route } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";
import "../activity/activity.css";

/** The loader's live activity: loads, reloads, removals, load errors and warnings, newest first. */
export function ActivityPage(_props: { route: Route }) {
  usePageTitle("Activity");
  const feed = useActivityFeed();
  const [shown, setShown] = useState<ReadonlySet<ActivityType>>(() => new Set(ACTIVITY_TYPES));
  const [text, setText] = useState("");
  useAnnouncedLoadErrors(feed.entries);

  const visible = useMemo(() => {
    const needle = text.trim().toLowerCase();
    const matching = feed.entries.filter(
      (entry) =>
        shown.has(entry.activity.type) && (needle === "" || activityText(entry.activity).includes(needle)),
    );
    return matching.reverse();
  }, [feed.entries, shown, text]);

  const toggle = (type: ActivityType, on: boolean) => {
    const next = new Set(shown);
    if (on) next.add(type);
    else next.delete(type);
    setShown(next);
  };

  return (
    <section class="activity-page">
      <h1>Activity</h1>
      <p class="field-hint">
        What the loader does as plugin files change, live. The stream keeps no history: this feed holds what
        happened since this tab opened the Studio{feed.since === null ? "" : ` (${formatTime(feed.since)})`},
        the last {ACTIVITY_FEED_LIMIT} events.
      </p>
      <form class="toolbar activity-filters" onSubmit={(event) => event.preventDefault()}>
        <fieldset>
          <legend>Show</legend>
          {ACTIVITY_TYPES.map((type) => (
            <label key={type} class="activity-filter">
              <input
                type="checkbox"
                checked={shown.has(type)}
                onChange={(event) => toggle(type, event.currentTarget.checked)}
              />{" "}
              {ACTIVITY_LABELS[type].plural}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="activity-text">Filter activity</label>
          <input
            id="activity-text"
            type="search"
            value={text}
            placeholder="name, file, message…"
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </div>
      </form>
      {feed.dropped > 0 ? (
        <p class="notice notice-warning" role="status">
          The server dropped {feed.dropped} live {feed.dropped === 1 ? "event" : "events"} because this tab
          read too slowly (last at {formatTime(feed.lastLaggedAt)}): the feed may miss some activity.
        </p>
      ) : null}
      {feed.reconnects > 0 ? (
        <p class="notice notice-warning" role="status">
          The live stream reconnected at {formatTime(feed.lastReconnectAt)}: activity while it was away is not
          shown.
        </p>
      ) : null}
      <p class="activity-count">
        {feed.entries.length === 0
          ? ""
          : `Showing ${visible.length} of ${feed.entries.length} ${feed.entries.length === 1 ? "event" : "events"}${
              feed.evicted > 0 ? ` (${feed.evicted} older ones let go)` : ""
            }`}
      </p>
      <ol aria-label="Activity feed" class="activity-feed">
        {visible.map((entry) => (
          <ActivityItem key={entry.sequence} activity={entry.activity} />
        ))}
      </ol>
      {feed.entries.length === 0 ? (
        <p class="empty">
          No activity yet. Events appear here as they happen — add, edit or remove a skill or interceptor
          under <code>plugins/</code> to see one; what happened before this tab opened is not replayed.
        </p>
      ) : visible.length === 0 ? (
        <p class="empty">No activity matches the filters.</p>
      ) : null}
    </section>
  );
}

/** Says a new load error to screen readers while the page is shown (other events only show). */
function useAnnouncedLoadErrors(entries: ReturnType<typeof useActivityFeed>["entries"]): void {
  const { announce } = useStudio();
  const seen = useRef(entries.at(-1)?.sequence ?? 0);
  useEffect(() => {
    const newest = entries.at(-1)?.sequence ?? 0;
    // A smaller sequence is a new feed (another sign-in): start over.
    const fresh = entries.filter((entry) => entry.sequence > (newest < seen.current ? 0 : seen.current));
    seen.current = newest;
    const failure = fresh.findLast((entry) => entry.activity.type === "load-error")?.activity;
    if (failure?.type === "load-error") announce(`Load error in ${failure.failure.file}`);
  }, [entries, announce]);
}

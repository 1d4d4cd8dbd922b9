import { useEffect } from "preact/hooks";
import { DurationFigure } from "../charts/duration-figure.js";
import { ExecutionTimelineFigure } from "../charts/execution-timeline-figure.js";
import { useThrottled } from "../charts/use-throttled.js";
import { useApi } from "../hooks/use-api.js";
import { useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import { href, navigate, type Route } from "../router/hash-route.js";
import { useStudio } from "../studio-context.js";

/** The ranges the charts cover; the timeline always counts per minute. */
const RANGES = {
  "15m": { label: "15 min", words: "the last 15 minutes", seconds: 15 * 60 },
  "1h": { label: "1 h", words: "the last hour", seconds: 60 * 60 },
  "24h": { label: "24 h", words: "the last 24 hours", seconds: 24 * 60 * 60 },
} as const;

type RangeKey = keyof typeof RANGES;

const MINUTE_MS = 60_000;
/** Finished executions re-read the numbers at most this often. */
const LIVE_INTERVAL_MS = 5000;

function isRangeKey(value: string | null): value is RangeKey {
  return value !== null && Object.hasOwn(RANGES, value);
}

/** `[since, until)` of the range, on whole minutes so each bar is one wall-clock minute. */
function rangeBounds(seconds: number): { since: string; until: string } {
  const until = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  return { since: new Date(until - seconds * 1000).toISOString(), until: new Date(until).toISOString() };
}

/** Charts of the caller's executions: per minute by status, and duration by skill, live. */
export function ChartsPage({ route }: { route: Route }) {
  usePageTitle("Charts");
  const { api } = useStudio();
  const asked = route.query.get("range");
  const rangeKey: RangeKey = isRangeKey(asked) ? asked : "1h";
  const range = RANGES[rangeKey];

  const timeline = useApi(
    (signal) => api.executionTimeline({ ...rangeBounds(range.seconds), bucketSeconds: 60 }, signal),
    [api, rangeKey],
  );
  const durations = useApi(
    (signal) => api.durationHistogram({ since: rangeBounds(range.seconds).since }, signal),
    [api, rangeKey],
  );
  const reload = useThrottled(() => {
    timeline.reload();
    durations.reload();
  }, LIVE_INTERVAL_MS);
  useLiveEvent((event) => {
    if (event.type === "finished" || event.type === "resync" || event.type === "lagged") reload();
  });
  // The window slides with the clock even when nothing finishes.
  useEffect(() => {
    const timer = setInterval(reload, MINUTE_MS);
    return () => clearInterval(timer);
  }, [reload]);

  return (
    <section class="charts-page">
      <h1>Charts</h1>
      <form class="toolbar" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="chart-range">Range</label>
          <select
            id="chart-range"
            value={rangeKey}
            onChange={(event) =>
              navigate(href(["charts"], { range: event.currentTarget.value }), { replace: true })
            }
          >
            {Object.entries(RANGES).map(([key, entry]) => (
              <option key={key} value={key}>
                {entry.label}
              </option>
            ))}
          </select>
        </div>
        <p class="field-hint">Your executions; updated live as they finish.</p>
      </form>
      <ExecutionTimelineFigure state={timeline} rangeLabel={range.words} />
      <DurationFigure state={durations} rangeLabel={range.words} />
    </section>
  );
}

/** Commits in one week (Sunday to Saturday, UTC, as GitHub's statistics count them). */
export interface WeekCount {
  /** The Sunday the week starts on, `YYYY-MM-DD`. */
  weekStart: string;
  total: number;
  /** Commits per weekday, Sunday first. */
  days: number[];
}

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** Beyond this many weeks (a bogus 1970 commit date, a decades-wide window) only weeks with commits are listed. */
const MAX_FILLED_WEEKS = 1_100;

/** Midnight UTC of the Sunday starting the week that contains `time`. */
export function weekStartOf(time: number): number {
  const date = new Date(time);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return midnight - date.getUTCDay() * DAY_MS;
}

/** `YYYY-MM-DD` of an epoch-ms time. */
export function isoDate(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/**
 * Buckets commit times into weeks. With a `range`, every week from the one holding `range.from`
 * to the one holding `range.to` is listed, zeros included, so gaps show; weeks are oldest first.
 */
export function countByWeek(times: number[], range?: { from: number; to: number }): WeekCount[] {
  const weeks = new Map<number, number[]>();
  const weekOf = (start: number) => {
    let days = weeks.get(start);
    if (days === undefined) {
      days = [0, 0, 0, 0, 0, 0, 0];
      weeks.set(start, days);
    }
    return days;
  };
  if (range !== undefined && range.from <= range.to) {
    const first = weekStartOf(range.from);
    const last = weekStartOf(range.to);
    if ((last - first) / WEEK_MS < MAX_FILLED_WEEKS) {
      for (let start = first; start <= last; start += WEEK_MS) weekOf(start);
    }
  }
  for (const time of times) {
    const days = weekOf(weekStartOf(time));
    const weekday = new Date(time).getUTCDay();
    days[weekday] = (days[weekday] ?? 0) + 1;
  }
  return [...weeks.entries()]
    .sort(([left], [right]) => left - right)
    .map(([start, days]) => ({
      weekStart: isoDate(start),
      total: days.reduce((sum, count) => sum + count, 0),
      days,
    }));
}

/** A duration in ms as people read it: `840 ms`, `2.4 s`, `3 min 5 s`; `—` for none. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** An ISO instant as local date and time, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { hour12: false });
}

/** How long ago an ISO instant was: `12 s ago`, `5 min ago`, else the date. */
export function formatAgo(iso: string, now: number = Date.now()): string {
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 60) return `${Math.max(seconds, 0)} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return formatTime(iso);
}

/** A ratio from 0 to 1 as a percentage; `—` for none. */
export function formatPercent(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? "—" : `${(ratio * 100).toFixed(ratio === 1 ? 0 : 1)} %`;
}

/**
 * An ISO instant as a `datetime-local` input shows it (local wall time, to the second or the
 * minute); "" for none or an unreadable one.
 */
export function toDateTimeLocal(value: unknown, precision: "seconds" | "minutes" = "seconds"): string {
  if (typeof value !== "string" || value === "") return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (number: number) => String(number).padStart(2, "0");
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return precision === "minutes" ? `${day}T${time}` : `${day}T${time}:${pad(date.getSeconds())}`;
}

/** A `datetime-local` input's text (read as local time) as an ISO instant; undefined for none or an unreadable one. */
export function fromDateTimeLocal(text: string): string | undefined {
  if (text === "") return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

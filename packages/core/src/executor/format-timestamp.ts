/** The minute the last formatted instant fell in, and its ISO text up to the seconds. */
let minuteStart = Number.NaN;
let minutePrefix = "";

const MINUTE_MS = 60_000;

/**
 * `new Date(milliseconds).toISOString()`, without a `Date` for instants in the minute of the
 * previous call: an execution record carries two timestamps, and on this path the Date
 * conversion costs more than the rest of the record together.
 */
export function formatTimestamp(milliseconds: number): string {
  const offset = milliseconds - minuteStart;
  if (!(offset >= 0 && offset < MINUTE_MS) || !Number.isInteger(milliseconds)) {
    const text = new Date(milliseconds).toISOString();
    if (!Number.isInteger(milliseconds)) return text;
    minuteStart = milliseconds - (((milliseconds % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    // `ss.mmmZ` ends every ISO string, whatever the width of its year.
    minutePrefix = new Date(minuteStart).toISOString().slice(0, -7);
    return text;
  }
  const seconds = Math.floor(offset / 1000);
  const millis = offset - seconds * 1000;
  return `${minutePrefix}${seconds < 10 ? "0" : ""}${seconds}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}

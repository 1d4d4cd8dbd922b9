import { performance } from "node:perf_hooks";

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Percentile (0–100) of a list of numbers. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `operation` `count` times one after another; returns operations per second. */
export async function sequentialRate(count, operation) {
  const start = performance.now();
  for (let index = 0; index < count; index++) await operation(index);
  return count / ((performance.now() - start) / 1000);
}

/** Runs `operation` `count` times with `concurrency` in flight; returns operations per second. */
export async function concurrentRate(count, concurrency, operation) {
  let next = 0;
  const worker = async () => {
    while (next < count) await operation(next++);
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return count / ((performance.now() - start) / 1000);
}

/**
 * Interleaves rounds of every case so that machine noise hits all of them alike, and
 * returns the median rate of each.
 */
export async function compareRates(cases, rounds) {
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(cases)) samples[name].push(await run());
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

/** Formats a rate for the report. */
export const formatRate = (rate) => `${Math.round(rate).toLocaleString("en-US")}/s`;

/**
 * Samples `process.memoryUsage.rss()` every `intervalMs` (and once at the start) until `stop()`,
 * which takes a last sample and returns the peak and how many samples were taken. `onSample`, when
 * given, runs after each sample (a drain check, say), so a caller needs no second timer.
 */
export function startRssSampler({ intervalMs = 50, onSample } = {}) {
  let peak = 0;
  let samples = 0;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
    samples++;
    onSample?.(rss);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peak, samples };
    },
  };
}

import { useMemo, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { ExecutionStatus, ExecutionTimeline } from "../api/api-types.js";
import { ApiContent } from "../components/api-content.js";
import { statusLabel } from "../components/status-badge.js";
import { formatTime } from "../format.js";
import type { ApiState } from "../hooks/use-api.js";
import {
  COUNT_INCREMENTS,
  chartTheme,
  clockTicks,
  countRange,
  STACK_ORDER,
  STATUS_COLORS,
} from "./chart-theme.js";
import { UplotChart } from "./uplot-chart.js";

/** The statuses that occur in the timeline, bottom of the stack first. */
function statusesOf(timeline: ExecutionTimeline): ExecutionStatus[] {
  return STACK_ORDER.filter((status) =>
    timeline.buckets.some((bucket) => (bucket.statuses[status] ?? 0) > 0),
  );
}

function totalOf(statuses: Partial<Record<ExecutionStatus, number>>): number {
  return Object.values(statuses).reduce((sum, count) => sum + (count ?? 0), 0);
}

/** "Executions per minute": the caller's executions per bucket, stacked by status, with the numbers as a table. */
export function ExecutionTimelineFigure({
  state,
  rangeLabel,
}: {
  state: ApiState<ExecutionTimeline>;
  /** "the last hour". */
  rangeLabel: string;
}) {
  return (
    <figure class="card chart-figure" data-figure="executions-per-minute">
      <figcaption>Executions per minute</figcaption>
      <ApiContent state={state} failure="The execution timeline cannot be read">
        {(timeline) => <TimelineContent timeline={timeline} rangeLabel={rangeLabel} />}
      </ApiContent>
    </figure>
  );
}

function TimelineContent({ timeline, rangeLabel }: { timeline: ExecutionTimeline; rangeLabel: string }) {
  const statuses = useMemo(() => statusesOf(timeline), [timeline]);
  const totals = useMemo(() => {
    const sums = new Map<ExecutionStatus, number>();
    for (const bucket of timeline.buckets)
      for (const status of statuses)
        sums.set(status, (sums.get(status) ?? 0) + (bucket.statuses[status] ?? 0));
    return sums;
  }, [timeline, statuses]);
  const total = [...totals.values()].reduce((sum, count) => sum + count, 0);
  return (
    <>
      <p class="chart-summary" data-chart-total={total}>
        {total === 0
          ? `No executions in ${rangeLabel}.`
          : `${total} ${total === 1 ? "execution" : "executions"} in ${rangeLabel}: ${statuses
              .map((status) => `${totals.get(status)} ${statusLabel(status)}`)
              .join(", ")}.`}
      </p>
      {total === 0 ? null : <TimelineChart timeline={timeline} statuses={statuses} />}
      <details class="chart-numbers">
        <summary>The numbers of this chart</summary>
        <TimelineTable timeline={timeline} statuses={statuses} totals={totals} />
      </details>
    </>
  );
}

function TimelineChart({ timeline, statuses }: { timeline: ExecutionTimeline; statuses: ExecutionStatus[] }) {
  // The legend's and the x range's functions read the latest numbers: the options stay the same
  // object (the chart is not rebuilt) while only the data changes.
  const latest = useRef(timeline);
  latest.current = timeline;
  const statusKey = statuses.join(",");
  // Rebuilt only when the shape changes: the list of statuses (statusKey).
  const options = useMemo((): Omit<uPlot.Options, "width" | "height"> => {
    const theme = chartTheme();
    const bars = uPlot.paths.bars?.({ align: 1, size: [0.9, 40, 2], gap: 1 });
    // Stacked by drawing each status's running total, the tallest first: each next series
    // covers the lower part of the bar, leaving the band of the one before visible.
    const topFirst = [...statuses].reverse();
    return {
      series: [
        {
          label: "Minute",
          value: (_chart, value) => (value === null ? "—" : formatTime(new Date(value * 1000).toISOString())),
        },
        ...topFirst.map(
          (status): uPlot.Series => ({
            label: statusLabel(status),
            stroke: STATUS_COLORS[status],
            fill: STATUS_COLORS[status],
            width: 0,
            paths: bars,
            points: { show: false },
            value: (_chart, _value, _series, index) =>
              index === null ? "—" : String(latest.current.buckets[index]?.statuses[status] ?? 0),
          }),
        ),
      ],
      scales: {
        x: {
          time: true,
          range: (_chart, min, max) => [min, max + latest.current.bucketSeconds],
        },
        y: { range: countRange },
      },
      axes: [
        {
          stroke: theme.text,
          grid: { stroke: theme.grid, width: 1 },
          ticks: { stroke: theme.grid, width: 1 },
          values: clockTicks,
        },
        {
          stroke: theme.text,
          grid: { stroke: theme.grid, width: 1 },
          ticks: { stroke: theme.grid, width: 1 },
          incrs: COUNT_INCREMENTS,
          values: (_chart, splits) => splits.map((split) => String(split)),
        },
      ],
      cursor: { points: { show: false }, drag: { x: false, y: false } },
      legend: { live: true },
    };
  }, [statusKey]);

  const data = useMemo((): uPlot.AlignedData => {
    const starts = timeline.buckets.map((bucket) => Date.parse(bucket.start) / 1000);
    const running = timeline.buckets.map(() => 0);
    const stacked = statuses.map((status) =>
      timeline.buckets.map((bucket, index) => {
        running[index] = (running[index] ?? 0) + (bucket.statuses[status] ?? 0);
        return running[index] ?? 0;
      }),
    );
    return [starts, ...stacked.reverse()];
  }, [timeline, statuses]);

  return (
    <div class="chart-stacked">
      <UplotChart options={options} data={data} height={260} />
    </div>
  );
}

function TimelineTable({
  timeline,
  statuses,
  totals,
}: {
  timeline: ExecutionTimeline;
  statuses: ExecutionStatus[];
  totals: Map<ExecutionStatus, number>;
}) {
  const busy = timeline.buckets.filter((bucket) => totalOf(bucket.statuses) > 0);
  if (busy.length === 0) return <p class="empty">No minute of this range had an execution.</p>;
  return (
    <table aria-label="Executions per minute, as numbers">
      <thead>
        <tr>
          <th scope="col">Minute starting</th>
          {statuses.map((status) => (
            <th key={status} scope="col" class="number">
              {statusLabel(status)}
            </th>
          ))}
          <th scope="col" class="number">
            Total
          </th>
        </tr>
      </thead>
      <tbody>
        {busy.map((bucket) => (
          <tr key={bucket.start} data-bucket={bucket.start}>
            <th scope="row">
              <time dateTime={bucket.start}>{formatTime(bucket.start)}</time>
            </th>
            {statuses.map((status) => (
              <td key={status} class="number" data-status={status}>
                {bucket.statuses[status] ?? 0}
              </td>
            ))}
            <td class="number">{totalOf(bucket.statuses)}</td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr data-bucket="total">
          <th scope="row">All minutes</th>
          {statuses.map((status) => (
            <td key={status} class="number" data-status={status}>
              {totals.get(status) ?? 0}
            </td>
          ))}
          <td class="number">{[...totals.values()].reduce((sum, count) => sum + count, 0)}</td>
        </tr>
      </tfoot>
    </table>
  );
}

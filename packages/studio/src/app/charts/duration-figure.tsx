import { useMemo, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import type { DurationHistogram } from "../api/api-types.js";
import { ApiContent } from "../components/api-content.js";
import { formatDuration } from "../format.js";
import type { ApiState } from "../hooks/use-api.js";
import { COUNT_INCREMENTS, chartTheme, countRange } from "./chart-theme.js";
import { UplotChart } from "./uplot-chart.js";

type SkillDurations = DurationHistogram["skills"][number];

/** A bucket bound as people read it: `500 ms`, `2 s`. */
function boundLabel(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${ms / 1000} s`;
}

/** Each bucket's range in words: `≤ 1 ms`, `1 ms – 2 ms`, `> 60 s`. */
function bucketLabels(skill: SkillDurations): string[] {
  let previous: number | null = null;
  return skill.buckets.map((bucket) => {
    const label =
      bucket.upToMs === null
        ? `> ${previous === null ? "0 ms" : boundLabel(previous)}`
        : previous === null
          ? `≤ ${boundLabel(bucket.upToMs)}`
          : `${boundLabel(previous)} – ${boundLabel(bucket.upToMs)}`;
    if (bucket.upToMs !== null) previous = bucket.upToMs;
    return label;
  });
}

/** The axis's shorter labels: each bucket's upper bound (`> 60 s` for the last). */
function axisLabels(skill: SkillDurations): string[] {
  const labels = bucketLabels(skill);
  return skill.buckets.map((bucket, index) =>
    bucket.upToMs === null ? (labels[index] ?? "") : boundLabel(bucket.upToMs),
  );
}

/** "Duration by skill": one skill's duration histogram (picked from a list), its p50/p95, and every skill's as a table. */
export function DurationFigure({
  state,
  rangeLabel,
}: {
  state: ApiState<DurationHistogram>;
  rangeLabel: string;
}) {
  return (
    <figure class="card chart-figure" data-figure="duration-by-skill">
      <figcaption>Duration by skill</figcaption>
      <ApiContent state={state} failure="The durations cannot be read">
        {(histogram) => <DurationContent histogram={histogram} rangeLabel={rangeLabel} />}
      </ApiContent>
    </figure>
  );
}

function DurationContent({ histogram, rangeLabel }: { histogram: DurationHistogram; rangeLabel: string }) {
  const skills = useMemo(
    () => [...histogram.skills].sort((left, right) => left.skillName.localeCompare(right.skillName)),
    [histogram],
  );
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const skill = skills.find((entry) => entry.skillName === picked) ?? skills.find((entry) => entry.count > 0);
  if (skill === undefined) {
    return <p class="empty">No finished execution in {rangeLabel}: run a skill to see how long it takes.</p>;
  }
  return (
    <>
      <div class="field chart-picker">
        <label for="duration-skill">Skill</label>
        <select
          id="duration-skill"
          value={skill.skillName}
          onChange={(event) => setPicked(event.currentTarget.value)}
        >
          {skills.map((entry) => (
            <option key={entry.skillName} value={entry.skillName}>
              {entry.skillName} ({entry.count})
            </option>
          ))}
        </select>
      </div>
      <p class="chart-summary" data-skill={skill.skillName}>
        <strong>{skill.skillName}</strong>: p50 {formatDuration(skill.p50DurationMs)}, p95{" "}
        {formatDuration(skill.p95DurationMs)} over {skill.count} finished{" "}
        {skill.count === 1 ? "execution" : "executions"} ({windowText(histogram, rangeLabel)}).
      </p>
      <DurationChart skill={skill} />
      <details class="chart-numbers">
        <summary>The numbers of this chart</summary>
        <table aria-label={`Durations of ${skill.skillName}, as numbers`}>
          <thead>
            <tr>
              <th scope="col">Duration</th>
              <th scope="col" class="number">
                Executions
              </th>
            </tr>
          </thead>
          <tbody>
            {bucketLabels(skill).map((label, index) => (
              <tr key={label} data-bucket={skill.buckets[index]?.upToMs ?? "more"}>
                <th scope="row">{label}</th>
                <td class="number">{skill.buckets[index]?.count ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <table aria-label="Durations of every skill" class="chart-overview">
        <thead>
          <tr>
            <th scope="col">Skill</th>
            <th scope="col" class="number">
              Finished executions
            </th>
            <th scope="col" class="number">
              p50
            </th>
            <th scope="col" class="number">
              p95
            </th>
          </tr>
        </thead>
        <tbody>
          {skills.map((entry) => (
            <tr key={entry.skillName} data-skill={entry.skillName}>
              <th scope="row">{entry.skillName}</th>
              <td class="number">{entry.count}</td>
              <td class="number">{formatDuration(entry.p50DurationMs)}</td>
              <td class="number">{formatDuration(entry.p95DurationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Which executions count: the range, and the per-skill window when it cuts. */
function windowText(histogram: DurationHistogram, rangeLabel: string): string {
  return `in ${rangeLabel}, each skill's last ${histogram.window.executions} at most`;
}

function DurationChart({ skill }: { skill: SkillDurations }) {
  const labels = useRef(axisLabels(skill));
  labels.current = axisLabels(skill);
  const bucketCount = skill.buckets.length;
  // Rebuilt only when the shape changes (the number of buckets); labels are read through the ref.
  const options = useMemo((): Omit<uPlot.Options, "width" | "height"> => {
    const theme = chartTheme();
    const indexes = Array.from({ length: bucketCount }, (_, index) => index);
    return {
      series: [
        {
          label: "Duration",
          value: (_chart, value) => (value === null ? "—" : (labels.current[value] ?? "")),
        },
        {
          label: "Executions",
          stroke: theme.accent,
          fill: theme.accent,
          width: 0,
          paths: uPlot.paths.bars?.({ size: [0.8, 60], gap: 2 }),
          points: { show: false },
        },
      ],
      scales: {
        x: { time: false, range: () => [-0.5, bucketCount - 0.5] },
        y: { range: countRange },
      },
      axes: [
        {
          stroke: theme.text,
          grid: { show: false },
          ticks: { stroke: theme.grid, width: 1 },
          splits: () => indexes,
          // Every label when they fit, else every second or third (a narrow window).
          filter: (chart, splits) => {
            const perLabel = chart.bbox.width / devicePixelRatio / Math.max(splits.length, 1);
            const step = Math.max(Math.ceil(44 / perLabel), 1);
            return splits.map((split, index) => (index % step === 0 ? split : null));
          },
          values: (_chart, splits) => splits.map((split) => labels.current[split] ?? ""),
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
  }, [bucketCount]);
  const data = useMemo(
    (): uPlot.AlignedData => [
      skill.buckets.map((_, index) => index),
      skill.buckets.map((bucket) => bucket.count),
    ],
    [skill],
  );
  return <UplotChart options={options} data={data} height={240} />;
}

import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import "./charts.css";

/** Props of {@link UplotChart}. */
export interface UplotChartProps {
  /**
   * Everything but the size (the chart takes its container's width). A new object makes a new
   * chart, so callers memoize it on what changes its shape (the series), not on the data.
   */
  options: Omit<uPlot.Options, "width" | "height">;
  data: uPlot.AlignedData;
  /** In CSS pixels, plot and axes (the legend comes below). */
  height: number;
}

/**
 * One uPlot chart, owned by the component: created on mount, given new data in place, resized
 * with its container (a window resize, a narrower layout) and destroyed on unmount, so switching
 * pages leaves no canvas, observer or window listener behind. Decorative to assistive technology:
 * every chart of the Studio comes with the same numbers as text.
 */
export function UplotChart({ options, data, height }: UplotChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | undefined>(undefined);
  const dataRef = useRef(data);
  dataRef.current = data;

  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const created = new uPlot({ ...options, width: widthOf(element), height }, dataRef.current, element);
    chart.current = created;
    let width = widthOf(element);
    const observer = new ResizeObserver(() => {
      const next = widthOf(element);
      // Height changes (the legend wrapping) call back too: only a new width resizes.
      if (next === width) return;
      width = next;
      created.setSize({ width, height });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      created.destroy();
      chart.current = undefined;
    };
  }, [options, height]);

  useEffect(() => {
    // The chart created with these options already has this data.
    if (chart.current !== undefined && chart.current.data !== data) chart.current.setData(data);
  }, [data]);

  return <div class="chart" ref={container} aria-hidden="true" data-chart />;
}

/** The container's content width, at least enough for the axes to fit. */
function widthOf(element: HTMLElement): number {
  return Math.max(Math.floor(element.clientWidth), 240);
}

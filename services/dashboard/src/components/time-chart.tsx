import type { Granularity } from './uplot-chart.ts';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { fmtInt } from '../format.ts';
import { hourBucketStart } from '../hour-bucket-start.ts';
import { TableScroll } from './table-scroll.tsx';
// In the first chunk, not the chart's: the legend's frame (below) takes uPlot's styles before uPlot loads.
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  /** null: no figure, not zero (a bucket not begun yet; for the previous period, one it lacks). */
  values: Array<number | null>;
  /** What a null says, in the table, to screen readers: "not begun yet" unless the series says otherwise. */
  noFigure?: string;
  /** CSS custom property holding the colour, so light and dark themes both read well. */
  color: string;
  /** Drawn dashed and unfilled: a reference line (the previous period), not a figure of the range. */
  dashed?: boolean;
}

/** Bucket labels are local to the report's time zone: drawn as written, never shifted by the browser's zone. */
function bucketSeconds(date: string): number {
  return Date.parse(date.length === 10 ? `${date}T00:00:00Z` : `${date}:00Z`) / 1000;
}

/** Line widths in CSS px; the legend's markers take them as borders, in uPlot and in its frame alike. */
export const LINE_WIDTH = 2;
export const DASHED_WIDTH = 1.5;

/**
 * uPlot's inline legend as it draws it while no bucket is pointed at ("--" for each value),
 * for the time before the chart is drawn: as tall as the legend will be at any width, so
 * nothing below moves when the chart draws (the chart's code is a chunk that loads after
 * the figures, and on a busy machine lands frames later).
 */
export function LegendFrame({ series }: { series: ReadonlyArray<Pick<Series, 'label' | 'color' | 'dashed'>> }) {
  return (
    <div class="uplot legend-frame" aria-hidden="true">
      <table class="u-legend u-inline u-live">
        <tbody>
          {[{ label: 'Time', color: '', dashed: false }, ...series].map((s, i) => (
            <tr class="u-series" key={s.label}>
              <th>
                <div class="u-marker" style={i > 0 ? { border: `${s.dashed ? DASHED_WIDTH : LINE_WIDTH}px ${s.dashed ? 'dashed' : 'solid'} var(${s.color})` } : undefined} />
                <div class="u-label">{s.label}</div>
              </th>
              <td class="u-value">--</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The time series as a uPlot chart (loaded as its own chunk after the numbers
 * show) and, for screen readers and anyone who prefers it, the same data as a
 * table. The chart itself is hidden from assistive technology: the table says it all.
 */
export function TimeChart({ dates, series, title, granularity, timeZone }: { dates: string[]; series: Series[]; title: string; granularity?: Granularity; timeZone?: string }) {
  const box = useRef<HTMLDivElement>(null);
  // Hour buckets where they start on the report's clock (05:30 in Kolkata, not the label's 05:00).
  const starts = useMemo(() => (timeZone ? dates.map((d) => hourBucketStart(d, timeZone)) : dates), [dates, timeZone]);
  const [plot, setPlot] = useState<uPlot | null>(null);

  useEffect(() => {
    let disposed = false;
    let instance: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    const target = box.current;
    void import('./uplot-chart.ts').then(({ drawChart }) => {
      if (disposed || !target) return;
      instance = drawChart(target, starts.map(bucketSeconds), series, granularity);
      setPlot(instance);
      observer = new ResizeObserver(() => {
        if (!disposed) instance?.setSize({ width: target.clientWidth, height: 240 });
      });
      observer.observe(target);
    });
    return () => {
      disposed = true;
      observer?.disconnect();
      instance?.destroy();
    };
  }, [starts, series, granularity]);

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" aria-hidden="true" data-ready={plot ? 'true' : 'false'} />
      {!plot && <LegendFrame series={series} />}
      <details>
        <summary>Show as a table</summary>
        <TableScroll label={title}>
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {series.map((s) => (
                  <th scope="col" class="num" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {starts.map((d, i) => (
                <tr key={d}>
                  <th scope="row">{d.replace('T', ' ')}</th>
                  {series.map((s) => (
                    <td class="num" key={s.label}>
                      {s.values[i] === null ? <span aria-label={s.noFigure ?? 'not begun yet'}>–</span> : fmtInt(s.values[i] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </details>
    </figure>
  );
}

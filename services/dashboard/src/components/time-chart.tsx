import type { Granularity } from './uplot-chart.ts';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { fmtInt } from '../format.ts';
import { hourBucketStart } from '../hour-bucket-start.ts';
import { TableScroll } from './table-scroll.tsx';

export interface Series {
  label: string;
  /** null: no figure, not zero (a bucket not begun yet; for the previous period, one it lacks). */
  values: Array<number | null>;
  /** CSS custom property holding the colour, so light and dark themes both read well. */
  color: string;
  /** Drawn dashed and unfilled: a reference line (the previous period), not a figure of the range. */
  dashed?: boolean;
}

/** Bucket labels are local to the report's time zone: drawn as written, never shifted by the browser's zone. */
function bucketSeconds(date: string): number {
  return Date.parse(date.length === 10 ? `${date}T00:00:00Z` : `${date}:00Z`) / 1000;
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
                      {s.values[i] === null ? <span aria-label={s.dashed ? 'no such period' : 'not begun yet'}>–</span> : fmtInt(s.values[i] ?? 0)}
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

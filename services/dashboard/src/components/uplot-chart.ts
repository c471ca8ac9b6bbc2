import uPlot from 'uplot';
import { DASHED_WIDTH, LINE_WIDTH, type Series } from './time-chart.tsx';

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

const HOUR = 3_600;
const DAY = 86_400;
export type Granularity = 'hour' | 'day' | 'week' | 'month';

/**
 * The buckets' size, from their spacing (the widest gap: a first week or month may
 * start mid-way, at the range's first day; an hour series skips one at a DST change).
 */
function granularityOf(xs: number[]): Granularity {
  let gap = 0;
  for (let i = 1; i < xs.length; i++) gap = Math.max(gap, xs[i]! - xs[i - 1]!);
  if (gap === 0) return 'day';
  return gap < DAY ? 'hour' : gap < 7 * DAY ? 'day' : gap < 28 * DAY ? 'week' : 'month';
}

/** In UTC: the seconds are the buckets' local times written as UTC (time-chart.tsx), so UTC prints them as the report's zone has them. */
const format = (options: Intl.DateTimeFormatOptions) => {
  const f = new Intl.DateTimeFormat(undefined, { ...options, timeZone: 'UTC' });
  return (x: number) => f.format(x * 1000);
};
const wholeHourOf = format({ hour: 'numeric' });
const hourMinuteOf = format({ hour: 'numeric', minute: '2-digit' });
/** An hour bucket's start: "5 AM", or "5:30 AM" in a zone whose offset has minutes (hour-bucket-start.ts). */
const hourOf = (x: number) => (x % HOUR === 0 ? wholeHourOf(x) : hourMinuteOf(x));
const dayOf = format({ month: 'short', day: 'numeric' });
const monthOf = format({ month: 'short', year: 'numeric' });
const fullDay = format({ month: 'short', day: 'numeric', year: 'numeric' });
const fullHour = format({ month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const fullMonth = format({ month: 'long', year: 'numeric' });

/** A tick's label: hours as times (the day under each midnight and the first), days and weeks as dates, months by name. */
function tickLabel(granularity: Granularity, x: number, first: boolean): string {
  if (granularity === 'hour') return x % DAY < HOUR || first ? `${hourOf(x)}\n${dayOf(x)}` : hourOf(x);
  return granularity === 'month' ? monthOf(x) : dayOf(x);
}

/** The hovered bucket in the legend, whole. */
function bucketLabel(granularity: Granularity, x: number): string {
  if (granularity === 'hour') return fullHour(x);
  if (granularity === 'week') return `Week of ${fullDay(x)}`;
  return granularity === 'month' ? fullMonth(x) : fullDay(x);
}

/** Every n-th bucket that fits, n from these: on whole hours of the day, whole quarters; labels this many CSS pixels apart at least. */
const strides: Record<Granularity, number[]> = { hour: [1, 2, 3, 4, 6, 12, 24], day: [1, 2, 3, 7, 14, 28], week: [1, 2, 4, 8, 13, 26], month: [1, 2, 3, 6, 12] };
const labelSpace: Record<Granularity, number> = { hour: 48, day: 64, week: 64, month: 80 };

/** Ticks on buckets (never between them, never a bucket left out for lack of a rule), as many as fit `width`. */
function bucketTicks(xs: number[], granularity: Granularity, width: number): number[] {
  const fit = Math.max(1, Math.floor(width / labelSpace[granularity]));
  const stride = strides[granularity].find((n) => Math.ceil(xs.length / n) <= fit) ?? Math.ceil(xs.length / fit);
  if (stride === 1) return xs;
  // Hours on multiples of the stride (0, 6, 12, 18), months on quarters: labels a reader expects; days and weeks from the first.
  const on = (x: number, i: number) =>
    granularity === 'hour' ? Math.floor(x / HOUR) % stride === 0 : granularity === 'month' ? new Date(x * 1000).getUTCMonth() % stride === 0 : i % stride === 0;
  const ticks = xs.filter((x, i) => on(x, i));
  return ticks.length > 0 ? ticks : [xs[0]!];
}

/** `granularity` when the caller knows it (a single bucket has no spacing to tell it by), else from the spacing. */
export function drawChart(target: HTMLElement, xs: number[], series: Series[], known?: Granularity): uPlot {
  const axis = { stroke: cssVar('--muted'), grid: { stroke: cssVar('--grid'), width: 1 }, ticks: { stroke: cssVar('--grid') } };
  const granularity = known ?? granularityOf(xs);
  const xAxis: uPlot.Axis = {
    ...axis,
    ...(granularity === 'hour' ? { size: 64 } : {}),
    splits: (u) => bucketTicks(xs, granularity, u.bbox.width / devicePixelRatio),
    values: (_u, ticks) => ticks.map((t, i) => tickLabel(granularity, t, i === 0)),
  };
  return new uPlot(
    {
      width: target.clientWidth || 600,
      height: 240,
      // Buckets are named in the report's zone already: show them as UTC so nothing shifts.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      // One bucket alone: uPlot would span years around it; half a day either side keeps it a point in its day.
      scales: { x: { time: true, range: (_u, min, max) => (min === max ? [min - DAY / 2, max + DAY / 2] : [min, max]) } },
      axes: [xAxis, { ...axis, size: 56, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? t.toLocaleString() : '')) }],
      series: [{ value: (_u, x) => (x === null ? '' : bucketLabel(granularity, x)) }, ...series.map((s): uPlot.Series => (s.dashed ? { label: s.label, stroke: cssVar(s.color), width: DASHED_WIDTH, dash: [6, 4], points: { show: false } } : { label: s.label, stroke: cssVar(s.color), width: LINE_WIDTH, fill: `${cssVar(s.color)}22`, points: { show: xs.length < 60 } }))],
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
    },
    [xs, ...series.map((s) => s.values)],
    target,
  );
}

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Series } from './time-chart.tsx';

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

export function drawChart(target: HTMLElement, xs: number[], series: Series[]): uPlot {
  const axis = { stroke: cssVar('--muted'), grid: { stroke: cssVar('--grid'), width: 1 }, ticks: { stroke: cssVar('--grid') } };
  return new uPlot(
    {
      width: target.clientWidth || 600,
      height: 240,
      // Buckets are named in the report's zone already: show them as UTC so nothing shifts.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true } },
      axes: [axis, { ...axis, size: 56, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? t.toLocaleString() : '')) }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: cssVar(s.color), width: 2, fill: `${cssVar(s.color)}22`, points: { show: xs.length < 60 } }))],
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
    },
    [xs, ...series.map((s) => s.values)],
    target,
  );
}

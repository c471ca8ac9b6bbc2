/** The benchmarks' tables as text, for bench/run.ts and bench/before-after.ts. */
import type { Row } from './suite.ts';

function formatCell(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return String(value);
    if (Number.isInteger(value)) return value.toLocaleString('en-US');
    return value.toLocaleString('en-US', { maximumFractionDigits: Math.abs(value) < 10 ? 2 : 1 });
  }
  return value === undefined ? '' : String(value);
}

/** Fixed-width table: text left-aligned, numbers right-aligned. */
export function formatTable(rows: Row[]): string {
  if (rows.length === 0) return '(no rows)';
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const numeric = columns.map((column) => rows.every((row) => row[column] === undefined || typeof row[column] === 'number'));
  const pad = (text: string, i: number) => (numeric[i] ? text.padStart(widths[i]!) : text.padEnd(widths[i]!));
  const line = (parts: string[]) => `| ${parts.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(columns), rule, ...cells.map(line)].join('\n');
}

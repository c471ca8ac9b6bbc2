import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { stringify } from 'csv-stringify/sync';
import type { RowChunks } from './query-rows.ts';

/** `format=csv`, or no format and an Accept header that prefers text/csv over JSON. */
export function wantsCsv(ctx: Context, format: 'json' | 'csv' | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return ctx.accepts('application/json', 'text/csv') === 'text/csv';
}

/** A CSV download: a header row, then rows; a stream is sent as it comes (constant memory). */
export function sendCsv(ctx: Context, name: string, body: string | Readable): void {
  ctx.status = 200;
  ctx.type = 'text/csv; charset=utf-8';
  // Instants' colons are not allowed in Windows file names: 2026-11-27T13:00:00Z becomes 2026-11-27T130000Z.
  ctx.set('Content-Disposition', `attachment; filename="${name.replaceAll(':', '')}.csv"`);
  ctx.body = body;
}

/**
 * CSV injection (OWASP "CSV Injection"): a spreadsheet opening an export reads a cell
 * starting with one of these as a formula (`=HYPERLINK(...)` in a visitor's
 * utm_source, say). Every text cell of every export starting with one is prefixed
 * with a single quote, which spreadsheets show as text and hide. The one rule, for
 * the exports built here (neutralisedCell) and those ClickHouse formats (neutralisedSql).
 * Numbers are never text cells, so a negative revenue stays a number.
 */
export const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'] as const;

export function neutralisedCell(cell: string): string {
  return (FORMULA_STARTS as readonly string[]).includes(cell.charAt(0)) ? `'${cell}` : cell;
}

const sqlStarts = FORMULA_STARTS.map((c) => `'${c === '\t' ? '\\t' : c === '\r' ? '\\r' : c}'`).join(', ');

/** A ClickHouse String expression neutralised as neutralisedCell does, for exports ClickHouse formats. */
export function neutralisedSql(expression: string): string {
  return `if(substring(${expression}, 1, 1) IN (${sqlStarts}), concat('''', ${expression}), ${expression})`;
}

/**
 * Rows as CSV with the given columns, in order; null and absent are empty cells, as
 * ClickHouse writes them in the streamed exports; text cells neutralised. With
 * `header: false`, the rows alone (a later chunk of a streamed export).
 */
export function toCsv(columns: string[], rows: Array<Record<string, unknown>>, options: { header?: boolean } = {}): string {
  return stringify(
    rows.map((r) => columns.map((c) => (typeof r[c] === 'string' ? neutralisedCell(r[c]) : (r[c] ?? '')))),
    { header: options.header ?? true, columns, cast: { boolean: (b) => (b ? 'true' : 'false') } },
  );
}

/**
 * Chunks of rows as one CSV stream: the header row once (also when there are no rows),
 * then each chunk as it comes. The rows are let go (`close`) when the stream closes,
 * read to the end or not: Koa destroys a body it does not send (a HEAD request), and one
 * whose client went away.
 */
export function csvStream(columns: string[], rows: RowChunks<Record<string, unknown>>): Readable {
  const stream = Readable.from(
    (async function* lines() {
      yield toCsv(columns, []);
      for await (const chunk of rows.chunks) yield toCsv(columns, chunk, { header: false });
    })(),
    { objectMode: false },
  );
  stream.once('close', () => rows.close());
  return stream;
}

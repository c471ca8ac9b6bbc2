import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import { stringify } from 'csv-stringify/sync';

/** `format=csv`, or no format and an Accept header that prefers text/csv over JSON. */
export function wantsCsv(ctx: Context, format: 'json' | 'csv' | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return ctx.accepts('application/json', 'text/csv') === 'text/csv';
}

/** A CSV download: a header row, then rows; a stream is sent as it comes (constant memory). */
export function sendCsv(ctx: Context, name: string, body: string | Readable): void {
  ctx.status = 200;
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('Content-Disposition', `attachment; filename="${name}.csv"`);
  ctx.body = body;
}

/**
 * Rows as CSV with the given columns, in order; null and absent are empty cells, as
 * ClickHouse writes them in the streamed exports.
 */
export function toCsv(columns: string[], rows: Array<Record<string, unknown>>): string {
  return stringify(
    rows.map((r) => columns.map((c) => r[c] ?? '')),
    { header: true, columns, cast: { boolean: (b) => (b ? 'true' : 'false') } },
  );
}

import type { EventRow } from './event-row.ts';
import type { RowSink } from './binary-writer.ts';

/**
 * The `events` columns an insert names, in RowBinary order, with their types in
 * clickhouse/0001_events.sql (ingested_at is left to its DEFAULT). RowBinary
 * carries no names or types, so these must match the table exactly: a test
 * compares them with DESCRIBE TABLE events after the migrations.
 */
export const EVENT_COLUMNS = [
  { name: 'workspace_id', type: 'String' },
  { name: 'link_id', type: 'String' },
  { name: 'ts', type: "DateTime64(3, 'UTC')" },
  { name: 'click_id', type: 'String' },
  { name: 'kind', type: "Enum8('click' = 1, 'impression' = 2)" },
  { name: 'campaign_id', type: 'String' },
  { name: 'visitor_id', type: 'String' },
  { name: 'country', type: 'LowCardinality(String)' },
  { name: 'device_class', type: 'LowCardinality(String)' },
  { name: 'os', type: 'LowCardinality(String)' },
  { name: 'browser', type: 'LowCardinality(String)' },
  { name: 'referrer_host', type: 'String' },
  { name: 'utm_source', type: 'String' },
  { name: 'utm_medium', type: 'String' },
  { name: 'utm_campaign', type: 'String' },
  { name: 'utm_term', type: 'String' },
  { name: 'utm_content', type: 'String' },
  { name: 'source', type: 'LowCardinality(String)' },
  { name: 'rule_id', type: 'String' },
  { name: 'destination', type: 'String' },
  { name: 'bot', type: 'Bool' },
] as const satisfies ReadonlyArray<{ name: keyof EventRow; type: string }>;

type Unlisted = Exclude<keyof EventRow, (typeof EVENT_COLUMNS)[number]['name']>;
// A compile error here means EventRow has a column EVENT_COLUMNS does not list.
const everyColumnListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyColumnListed;

/** Enum8 codes of `kind`, read off its type so the two cannot disagree. */
export const EVENT_KIND_CODES: ReadonlyMap<string, number> = enumCodes(EVENT_COLUMNS[4].type);

/** One `events` row, columns in EVENT_COLUMNS order: RowBinary bytes, or a row of a Native block. */
export function writeEventRow(w: RowSink, row: EventRow): void {
  w.string(row.workspace_id);
  w.string(row.link_id);
  w.int64(row.ts);
  w.string(row.click_id);
  w.byte(EVENT_KIND_CODES.get(row.kind)!);
  w.string(row.campaign_id);
  w.string(row.visitor_id);
  w.string(row.country);
  w.string(row.device_class);
  w.string(row.os);
  w.string(row.browser);
  w.string(row.referrer_host);
  w.string(row.utm_source);
  w.string(row.utm_medium);
  w.string(row.utm_campaign);
  w.string(row.utm_term);
  w.string(row.utm_content);
  w.string(row.source);
  w.string(row.rule_id);
  w.string(row.destination);
  w.byte(row.bot ? 1 : 0);
}

/** `Enum8('a' = 1, 'b' = 2)` -> a:1, b:2. */
export function enumCodes(type: string): Map<string, number> {
  const codes = new Map<string, number>();
  for (const m of type.matchAll(/'([^'\\]*)'\s*=\s*(-?\d+)/g)) codes.set(m[1]!, Number(m[2]));
  return codes;
}

import { BinaryWriter } from '../../shared/clickhouse/binary-writer.ts';
import { EVENT_COLUMNS, toEventRow, writeEventRow, type EventRow } from '../../shared/clickhouse/events-table.ts';
import { NativeBlockWriter, nativeColumns } from '../../shared/clickhouse/native-block.ts';
import { clickEventFields, clickEventSchema, eventSubjects } from '../../shared/schemas/click-event.ts';
import { conversionEventSchema } from '../../shared/schemas/conversion.ts';
import type { BatchBody } from './event-batch.ts';
import { compileFastLine, type FastLine } from './fast-line.ts';
import { fastLinePlan } from './fast-line-plan.ts';

/** What every stored event row has. */
export interface EventRowBase {
  link_id: string;
  ts: number;
}

/**
 * What an ingester needs to know about one kind of event: where it arrives on
 * the bus, which ClickHouse table stores it, how a line becomes a row and how
 * rows are written for the insert. Every row has `link_id` and `ts` (ms) and a
 * unique id column.
 */
export interface EventTable<Row extends EventRowBase, Body extends BatchBody = BatchBody> {
  name: string;
  subject: string;
  table: string;
  idColumn: keyof Row & string;
  /** The row for a JSON line, or null when it can never be stored: the zod schema decides. */
  parse(json: unknown): Row | null;
  /** The insert's format, and the columns it names (absent: every column, matched by name). */
  format: 'Native' | 'JSONEachRow';
  columns?: readonly string[];
  /** An empty insert body in `format`; `expectedBytes` sizes it. */
  newBody(expectedBytes: number): Body;
  /** Appends one row to the body. */
  write(body: Body, row: Row): void;
  /** Optional hot path: a line's bytes straight into the batch, exactly as parse() + write() would; false leaves the line to them. */
  fastLine?: FastLine<Body>;
}

// Both from the declaration, in its order: the fast path writes field f into column f of the block.
const clickPlan = fastLinePlan(clickEventFields, { id: 'id', link: 'linkId', ts: 'ts' });
const clickNativeColumns = nativeColumns(EVENT_COLUMNS);

export const clickEvents: EventTable<EventRow, NativeBlockWriter> = {
  name: 'clicks',
  subject: eventSubjects.clicks,
  table: 'events',
  idColumn: 'click_id',
  parse(json) {
    const event = clickEventSchema.safeParse(json);
    return event.success ? toEventRow(event.data) : null;
  },
  // One Native block per insert: the format ClickHouse reads at least cost (see native-block.ts).
  format: 'Native',
  columns: EVENT_COLUMNS.map((c) => c.name),
  newBody: (expectedBytes) => new NativeBlockWriter(clickNativeColumns, expectedBytes),
  write: writeEventRow,
  ...(clickPlan ? { fastLine: compileFastLine(clickPlan) } : {}),
};

export interface ConversionRow {
  workspace_id: string;
  link_id: string;
  ts: number;
  conversion_id: string;
  click_id: string;
  campaign_id: string;
  event: string;
  value: number;
  currency: string;
  order_id: string;
  attributed: boolean;
  source: string;
}

export const conversionEvents: EventTable<ConversionRow, BinaryWriter> = {
  name: 'conversions',
  subject: eventSubjects.conversions,
  table: 'conversions',
  idColumn: 'conversion_id',
  parse(json) {
    const parsed = conversionEventSchema.safeParse(json);
    if (!parsed.success) return null;
    const c = parsed.data;
    return {
      workspace_id: c.workspaceId,
      link_id: c.linkId,
      ts: c.ts,
      conversion_id: c.id,
      click_id: c.clickId,
      campaign_id: c.campaignId,
      event: c.event,
      value: c.value,
      currency: c.currency,
      order_id: c.orderId ?? '',
      attributed: c.attributed,
      source: c.source,
    };
  },
  // Few and small: JSONEachRow text, as before (`value` goes into Decimal(18, 4) digit for digit).
  format: 'JSONEachRow',
  newBody: (expectedBytes) => new BinaryWriter(expectedBytes),
  write: (body, row) => body.text(`${JSON.stringify(row)}\n`),
};

import { clickEventSchema, eventSubjects } from '../../shared/schemas/click-event.ts';
import { conversionEventSchema } from '../../shared/schemas/conversion.ts';
import { toEventRow } from './event-row.ts';

/**
 * What an ingester needs to know about one kind of event: where it arrives on
 * the bus, which ClickHouse table stores it, and how a line becomes a row.
 * Every row has `link_id` and `ts` (ms) and a unique id column.
 */
/** What every stored event row has. */
export interface EventRowBase {
  link_id: string;
  ts: number;
}

export interface EventTable<Row extends EventRowBase> {
  name: string;
  subject: string;
  table: string;
  idColumn: keyof Row & string;
  /** The row for a JSON line, or null when it can never be stored. */
  parse(json: unknown): Row | null;
}

export const clickEvents: EventTable<ReturnType<typeof toEventRow>> = {
  name: 'clicks',
  subject: eventSubjects.clicks,
  table: 'events',
  idColumn: 'click_id',
  parse(json) {
    const event = clickEventSchema.safeParse(json);
    return event.success ? toEventRow(event.data) : null;
  },
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

export const conversionEvents: EventTable<ConversionRow> = {
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
};

import type { BusMessage } from '../../shared/bus/bus.ts';
import { idPrefixes } from '../../shared/ids.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import type { Logger } from '../../shared/logger.ts';
import { conversionEventSchema, type ConversionEvent } from '../../shared/schemas/conversion.ts';
import { webhookBody, type WebhookBusEvent, type WebhookConversionData } from '../../shared/schemas/webhook.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';

const TYPE = 'conversion.created';
const decoder = new TextDecoder();

function conversionData(c: ConversionEvent & { endpointIds?: string[] }): WebhookConversionData {
  const { id, ts, workspaceId: _workspaceId, endpointIds: _endpointIds, ...facts } = c;
  return { conversionId: id, timestamp: new Date(ts).toISOString(), ...facts };
}

/** Not JSON: undefined, which no schema accepts (a poison message is skipped, not retried forever). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** The event id of a conversion's announcement: derived, so every redelivery names the same event. */
export const conversionEventId = (conversionId: string) => `${idPrefixes.webhookEvent}_${conversionId.slice(conversionId.indexOf('_') + 1)}`;

/**
 * conversion.created, after dedup. Conversions reach the bus from POST
 * /conversions/s2s (an orderId already claimed by the API: a repeat never reaches
 * the bus) and from pixels (no database on that path: a reloaded thank-you page
 * sends its order again). So the announcement is decided here, where every
 * conversion passes, by claiming (workspace, orderId) in Postgres: the first
 * conversion of an order is announced, once, whichever sender sees it and however
 * often the bus redelivers it; later ones of the order are not. A conversion
 * without an orderId is its own order. Only workspaces with a subscribed endpoint
 * claim anything.
 */
export function conversionEvents(deps: { sql: Sql; directory: EndpointDirectory; logger: Logger }) {
  const { sql, directory, logger } = deps;

  return async function toEvents(messages: readonly BusMessage[]): Promise<WebhookBusEvent[]> {
    const conversions: Array<ConversionEvent & { endpointIds: string[] }> = [];
    for (const m of messages) {
      const parsed = conversionEventSchema.safeParse(parseJson(decoder.decode(m.data)));
      if (!parsed.success) {
        logger.warn('invalid conversion event skipped by webhooks', { subject: m.subject });
        continue;
      }
      const endpointIds = directory.subscribers(parsed.data.workspaceId, TYPE).map((e) => e.id);
      if (endpointIds.length > 0) conversions.push({ ...parsed.data, endpointIds });
    }
    if (conversions.length === 0) return [];
    const orderKey = (c: ConversionEvent) => c.orderId ?? c.id;
    await sql`
      INSERT INTO webhook_conversion_claims (workspace_id, order_key, conversion_id)
      SELECT * FROM unnest(${conversions.map((c) => c.workspaceId)}::text[], ${conversions.map(orderKey)}::text[], ${conversions.map((c) => c.id)}::text[])
      ON CONFLICT (workspace_id, order_key) DO NOTHING`;
    const claims = await sql<{ conversionId: string }[]>`
      SELECT conversion_id FROM webhook_conversion_claims
      WHERE (workspace_id, order_key) IN (SELECT * FROM unnest(${conversions.map((c) => c.workspaceId)}::text[], ${conversions.map(orderKey)}::text[]))`;
    const first = new Set(claims.map((c) => c.conversionId));
    return conversions
      .filter((c) => first.has(c.id))
      .map((c) => ({
        id: conversionEventId(c.id),
        workspaceId: c.workspaceId,
        type: TYPE,
        endpointIds: c.endpointIds,
        body: webhookBody(TYPE, c.ts, conversionData(c)),
      }));
  };
}

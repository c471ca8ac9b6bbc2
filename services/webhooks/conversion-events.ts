import type { BusMessage } from '../../shared/bus/bus.ts';
import { idPrefixes } from '../../shared/ids.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import type { Logger } from '../../shared/logger.ts';
import { conversionEventSchema, MAX_PIXEL_CONVERSIONS_PER_CLICK, type ConversionEvent } from '../../shared/schemas/conversion.ts';
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
 * without an orderId is its own order. Of one click's pixel conversions, the first
 * MAX_PIXEL_CONVERSIONS_PER_CLICK claimed are announced, as reports count them
 * (migration 0015). Only workspaces with a subscribed endpoint claim anything.
 */
export function conversionEvents(deps: { sql: Sql; directory: EndpointDirectory; logger: Logger }) {
  const { sql, directory, logger } = deps;

  return async function toEvents(messages: readonly BusMessage[]): Promise<WebhookBusEvent[]> {
    const parsedAll: ConversionEvent[] = [];
    for (const m of messages) {
      const parsed = conversionEventSchema.safeParse(parseJson(decoder.decode(m.data)));
      if (parsed.success) parsedAll.push(parsed.data);
      else logger.warn('invalid conversion event skipped by webhooks', { subject: m.subject });
    }
    if (parsedAll.length === 0) return [];
    // An endpoint created before a conversion happened hears of it, even when this
    // sender's endpoint list is older than that (it is read again every second): the
    // list is read again first, by a read that starts after the batch's latest
    // conversion (at most one read per batch; none when the list is newer).
    await directory.readSince(Math.min(Date.now(), Math.max(...parsedAll.map((c) => c.ts))));
    const conversions: Array<ConversionEvent & { endpointIds: string[] }> = [];
    for (const c of parsedAll) {
      const endpointIds = directory.subscribers(c.workspaceId, TYPE).map((e) => e.id);
      if (endpointIds.length > 0) conversions.push({ ...c, endpointIds });
    }
    if (conversions.length === 0) return [];
    const announced = await claim(sql, conversions);
    return conversions
      .filter((c) => announced.has(c.id))
      .map((c) => ({
        id: conversionEventId(c.id),
        workspaceId: c.workspaceId,
        type: TYPE,
        endpointIds: c.endpointIds,
        body: webhookBody(TYPE, c.ts, conversionData(c)),
      }));
  };
}

/**
 * An order's claim key. Pixel orders have their own: a pixel is public, so one fired first
 * with a guessed order id must not keep the merchant's authenticated s2s conversion of that
 * order from being announced (reports count the s2s one: conversion-filter.ts).
 */
const PIXEL_ORDER = 'pixel\t'; // order ids are printable ASCII: no tab, so no clash (and Postgres text takes no NUL)
const orderKey = (c: ConversionEvent) => (c.orderId === null ? c.id : c.source === 'pixel' ? `${PIXEL_ORDER}${c.orderId}` : c.orderId);

/**
 * Claims the conversions' orders in one transaction and answers the ids to announce: each
 * the first claim of its order and, for a pixel conversion, within its click's cap and of
 * an order no s2s conversion has claimed. A redelivered conversion finds its claim as it
 * was decided.
 */
async function claim(sql: Sql, conversions: readonly ConversionEvent[]): Promise<Set<string>> {
  // In time order, so a click's earlier pixel conversions take its cap first.
  const ordered = [...conversions].sort((x, y) => x.ts - y.ts || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  return sql.begin(async (t) => {
    const claimed = await t<{ conversionId: string }[]>`
      INSERT INTO webhook_conversion_claims (workspace_id, order_key, conversion_id)
      SELECT w, k, c FROM unnest(${ordered.map((c) => c.workspaceId)}::text[], ${ordered.map(orderKey)}::text[], ${ordered.map((c) => c.id)}::text[])
        WITH ORDINALITY AS b(w, k, c, n)
      ORDER BY n
      ON CONFLICT (workspace_id, order_key) DO NOTHING
      RETURNING conversion_id`;
    const fresh = new Set(claimed.map((r) => r.conversionId));
    // A pixel repeating an order an s2s postback reported is not announced and takes no
    // room in its click's cap, as reports neither count it nor cap it.
    const pixelOrders = ordered.filter((c) => c.source === 'pixel' && c.orderId !== null && fresh.has(c.id));
    const shadowed = new Set<string>();
    if (pixelOrders.length > 0) {
      const rows = await t<{ conversionId: string }[]>`
        UPDATE webhook_conversion_claims p SET announced = false
        FROM unnest(${pixelOrders.map((c) => c.workspaceId)}::text[], ${pixelOrders.map((c) => c.orderId!)}::text[]) AS o(w, k)
        WHERE p.workspace_id = o.w AND p.order_key = ${PIXEL_ORDER} || o.k
          AND EXISTS (SELECT 1 FROM webhook_conversion_claims s WHERE s.workspace_id = o.w AND s.order_key = o.k)
        RETURNING p.conversion_id`;
      for (const r of rows) shadowed.add(r.conversionId);
    }
    // Newly claimed pixel conversions by click, each click's in time order, each once (the
    // bus may carry one conversion twice in a batch).
    const byClick = new Map<string, ConversionEvent[]>();
    const counted = new Set<string>();
    for (const c of ordered) {
      if (c.source !== 'pixel' || !fresh.has(c.id) || shadowed.has(c.id) || counted.has(c.id)) continue;
      counted.add(c.id);
      const key = `${c.workspaceId}\u0000${c.clickId}`;
      byClick.set(key, [...(byClick.get(key) ?? []), c]);
    }
    const overCap: ConversionEvent[] = [];
    if (byClick.size > 0) {
      // Keys sorted: concurrent senders lock the counters they share in one order (no deadlock).
      const clicks = [...byClick.keys()].sort();
      const totals = await t<{ workspaceId: string; clickId: string; claimed: number }[]>`
        INSERT INTO webhook_pixel_clicks (workspace_id, click_id, claimed)
        SELECT w, k, n FROM unnest(${clicks.map((k) => byClick.get(k)![0]!.workspaceId)}::text[], ${clicks.map((k) => byClick.get(k)![0]!.clickId)}::text[],
          ${clicks.map((k) => byClick.get(k)!.length)}::int[]) WITH ORDINALITY AS b(w, k, n, i)
        ORDER BY i
        ON CONFLICT (workspace_id, click_id) DO UPDATE SET claimed = webhook_pixel_clicks.claimed + excluded.claimed
        RETURNING workspace_id, click_id, claimed`;
      for (const row of totals) {
        const mine = byClick.get(`${row.workspaceId}\u0000${row.clickId}`)!;
        const before = row.claimed - mine.length;
        mine.forEach((c, i) => before + i + 1 > MAX_PIXEL_CONVERSIONS_PER_CLICK && overCap.push(c));
      }
      if (overCap.length > 0) {
        await t`
          UPDATE webhook_conversion_claims SET announced = false
          WHERE (workspace_id, order_key) IN (SELECT * FROM unnest(${overCap.map((c) => c.workspaceId)}::text[], ${overCap.map(orderKey)}::text[]))`;
      }
    }
    const decided = await t<{ conversionId: string }[]>`
      SELECT conversion_id FROM webhook_conversion_claims
      WHERE announced AND (workspace_id, order_key) IN (SELECT * FROM unnest(${ordered.map((c) => c.workspaceId)}::text[], ${ordered.map(orderKey)}::text[]))`;
    return new Set(decided.map((r) => r.conversionId));
  });
}

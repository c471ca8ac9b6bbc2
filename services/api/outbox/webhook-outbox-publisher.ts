import { webhookSubjects, type Bus } from '../../../shared/bus/bus.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { webhookBody, webhookLinkDataSchema, type WebhookBusEvent } from '../../../shared/schemas/webhook.ts';
import type { PresentLink } from '../link-presenter.ts';
import type { LinkRow } from '../stores/link-store.ts';
import { outboxDrainer, type OutboxDrainer, type PublishBatch } from './outbox-drainer.ts';
import { takeFromQueue } from './take-from-queue.ts';

const BATCH = 500;
const encoder = new TextEncoder();

interface OutboxRow {
  seq: string;
  eventId: string;
  workspaceId: string;
  type: string;
  /** A links row (to_jsonb; timestamps as text; keys camelCased by the driver's transform), or a test event's data. */
  data: Record<string, unknown>;
  endpointId: string | null;
  occurredAt: Date;
}

const TIMESTAMPS = new Set(['expiresAt', 'createdAt', 'updatedAt', 'deletedAt']);
const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** A links row as to_jsonb() wrote it, as the store's LinkRow (whichever spelling its keys arrive in). */
function linkRowOf(data: Record<string, unknown>, hostnames: Map<string, string>): LinkRow {
  const row: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(data)) {
    const key = camel(column);
    row[key] = TIMESTAMPS.has(key) && typeof value === 'string' ? new Date(value) : value;
  }
  row.domainHostname = typeof row.domainId === 'string' ? (hostnames.get(row.domainId) ?? null) : null;
  return row as unknown as LinkRow;
}

/** The domain a links row names, whichever spelling its keys arrive in. */
const domainIdOf = (data: Record<string, unknown>) => (data.domainId ?? data.domain_id) as string | null | undefined;

/**
 * Drains webhook_outbox (link events queued by triggers in the change's own
 * transaction, and test events) onto the bus for the webhooks service. The body
 * is built here, where links are presented: the link as the API shows it (no
 * counters). An event is published under its id, so a row published twice (the
 * delete failed) is dropped by the bus's dedup window.
 */
export function webhookOutboxPublisher(deps: { sql: Sql; bus: Bus; presentLink: PresentLink; logger: Logger }): OutboxDrainer {
  const { sql, bus, presentLink, logger } = deps;

  // Rows another instance holds are not waited for (none reported held): events reach
  // endpoints later in any case, and no answer promises them delivered.
  const publishBatch: PublishBatch = async (live) => {
    const count = (await sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      // By index (take-from-queue.ts): its key is the queue's order, so the take walks it,
      // and the delete below (seq = ANY) probes it.
      const rows = await takeFromQueue(
        t,
        t<OutboxRow[]>`
          SELECT seq, event_id, workspace_id, type, data, endpoint_id, occurred_at FROM webhook_outbox
          ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      );
      if (rows.length === 0) return 0;
      const domainIds = [...new Set(rows.flatMap((r) => { const id = domainIdOf(r.data); return typeof id === 'string' ? [id] : []; }))];
      const hostnames = new Map(
        domainIds.length === 0 ? [] : (await t<{ id: string; hostname: string }[]>`SELECT id, hostname FROM domains WHERE id = ANY(${domainIds})`).map((d) => [d.id, d.hostname]),
      );
      // Where each event goes is settled now, in the transaction that takes it.
      const endpoints = await t<{ id: string; workspaceId: string; events: string[] }[]>`
        SELECT id, workspace_id, events FROM webhook_endpoints
        WHERE workspace_id = ANY(${[...new Set(rows.map((r) => r.workspaceId))]}) AND deleted_at IS NULL AND enabled`;
      const events: WebhookBusEvent[] = [];
      for (const r of rows) {
        const endpointIds = r.endpointId ? [r.endpointId] : endpoints.filter((e) => e.workspaceId === r.workspaceId && e.events.includes(r.type)).map((e) => e.id);
        if (endpointIds.length === 0) continue;
        try {
          const data = r.type.startsWith('link.') ? webhookLinkDataSchema.parse(presentLink(linkRowOf(r.data, hostnames))) : r.data;
          events.push({ id: r.eventId, workspaceId: r.workspaceId, type: r.type, endpointIds, body: webhookBody(r.type, r.occurredAt, data) });
        } catch (err) {
          // A row that cannot be shown would block every event behind it: dropped, loudly.
          logger.error('webhook event dropped: its outbox row cannot be presented', { eventId: r.eventId, type: r.type, ...errorFields(err) });
        }
      }
      await Promise.all(events.map((e) => bus.publishEvent(webhookSubjects.events, encoder.encode(JSON.stringify(e)), e.id)));
      live({ count: rows.length, held: [] });
      await t`DELETE FROM webhook_outbox WHERE seq = ANY(${rows.map((r) => r.seq)}::bigint[])`;
      return rows.length;
    })) as number;
    return { count, held: [] };
  };

  return outboxDrainer(publishBatch, BATCH, logger, 'webhook events');
}

/** How often leftovers are looked for: link events reach the bus within this (tests at once). */
export const WEBHOOK_OUTBOX_INTERVAL_MS = 200;

/** The publisher, polling: what every API process (and npm start) runs when it has a bus. */
export function startWebhookEventPublishing(deps: Parameters<typeof webhookOutboxPublisher>[0]): OutboxDrainer {
  const publisher = webhookOutboxPublisher(deps);
  publisher.start(WEBHOOK_OUTBOX_INTERVAL_MS);
  return publisher;
}

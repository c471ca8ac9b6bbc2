import { newId } from '../../../shared/ids.ts';
import { iso } from '../../../shared/db/rows.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { DEFAULT_LONGEST_FAILURE_GAP_MS, failureRunOver } from '../../../shared/webhooks/failure-run.ts';
import { TEST_EVENT_TYPE, type Webhook, type WebhookDelivery, type WebhookDeliveryDetail, type WebhookEventType } from '../../../shared/schemas/webhook.ts';

interface EndpointRow {
  id: string;
  url: string;
  description: string;
  events: WebhookEventType[];
  enabled: boolean;
  disabledReason: Webhook['disabledReason'];
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

interface DeliveryRow extends Omit<WebhookDelivery, 'nextAttemptAt' | 'lastAttemptAt' | 'createdAt'> {
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  createdAt: Date;
}

const presentDelivery = <R extends DeliveryRow>(r: R) => ({ ...r, nextAttemptAt: iso(r.nextAttemptAt), lastAttemptAt: iso(r.lastAttemptAt), createdAt: iso(r.createdAt)! });

function present(row: EndpointRow): Webhook {
  return {
    ...row,
    status: !row.enabled ? 'disabled' : row.failingSince ? 'failing' : 'active',
    failingSince: iso(row.failingSince),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export interface WebhookChanges {
  url?: string;
  events?: WebhookEventType[];
  description?: string;
  enabled?: boolean;
}

export function webhookStore(sql: Sql) {
  // An enabled endpoint's run of failures is over after a pause the retries never make
  // (failure-run.ts): the sender starts a new one at its next failure, and until then it
  // is not failing. A disabled endpoint keeps the run that disabled it (it is tried no more).
  const failingSince = sql`CASE WHEN enabled AND ${failureRunOver(sql, sql`last_failure_at`, sql`now()`, DEFAULT_LONGEST_FAILURE_GAP_MS)}
    THEN NULL ELSE failing_since END AS failing_since`;
  const columns = sql`id, url, description, events, enabled, disabled_reason, ${failingSince}, created_at, updated_at`;
  const live = (workspaceId: string, id: string) => sql`id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL`;
  const deliveryColumns = sql`d.id, d.event_id, d.event_type, d.status, d.attempts, d.response_status, d.latency_ms, d.error,
    d.next_attempt_at, d.last_attempt_at, d.created_at`;
  /** A delivery `d` of one of the workspace's endpoints. */
  const ofWorkspace = (workspaceId: string) => sql`EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.workspace_id = ${workspaceId})`;

  return {
    async create(workspaceId: string, input: { url: string; events: WebhookEventType[]; description: string; sealedSecret: string }): Promise<Webhook> {
      const [row] = await sql<EndpointRow[]>`
        INSERT INTO webhook_endpoints (id, workspace_id, url, description, events, sealed_secret)
        VALUES (${newId('webhook')}, ${workspaceId}, ${input.url}, ${input.description}, ${input.events}, ${input.sealedSecret})
        RETURNING ${columns}`;
      return present(row!);
    },

    async get(workspaceId: string, id: string): Promise<Webhook | undefined> {
      const [row] = await sql<EndpointRow[]>`SELECT ${columns} FROM webhook_endpoints WHERE ${live(workspaceId, id)}`;
      return row && present(row);
    },

    async list(workspaceId: string, query: { page: number; limit: number; enabled?: boolean | undefined }): Promise<{ items: Webhook[]; total: number }> {
      const where = sql`workspace_id = ${workspaceId} AND deleted_at IS NULL ${query.enabled === undefined ? sql`` : sql`AND enabled = ${query.enabled}`}`;
      const [count] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM webhook_endpoints WHERE ${where}`;
      const rows = await sql<EndpointRow[]>`
        SELECT ${columns} FROM webhook_endpoints WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items: rows.map(present), total: count!.total };
    },

    /** Enabling clears the failure streak; disabling by the client is `manual`. */
    async update(workspaceId: string, id: string, changes: WebhookChanges): Promise<Webhook | undefined> {
      const { enabled, ...rest } = changes;
      const toggled = enabled === undefined ? {} : enabled ? { enabled, disabledReason: null, failingSince: null } : { enabled, disabledReason: 'manual' };
      const [row] = await sql<EndpointRow[]>`
        UPDATE webhook_endpoints SET ${sql({ ...rest, ...toggled } as Record<string, unknown>)}, updated_at = now()
        WHERE ${live(workspaceId, id)} RETURNING ${columns}`;
      return row && present(row);
    },

    async delete(workspaceId: string, id: string): Promise<boolean> {
      const rows = await sql`UPDATE webhook_endpoints SET deleted_at = now(), updated_at = now() WHERE ${live(workspaceId, id)} RETURNING id`;
      return rows.length === 1;
    },

    /** Queues a test event for the endpoint through the same outbox as link events. */
    async queueTest(workspaceId: string, id: string): Promise<string> {
      const eventId = newId('webhookEvent');
      await sql`
        INSERT INTO webhook_outbox (event_id, workspace_id, type, data, endpoint_id)
        VALUES (${eventId}, ${workspaceId}, ${TEST_EVENT_TYPE}, ${sql.json({ message: 'A test event from linkroute', webhookId: id })}, ${id})`;
      return eventId;
    },

    async deliveries(
      workspaceId: string,
      endpointId: string,
      query: { page: number; limit: number; status?: WebhookDelivery['status'] | undefined },
    ): Promise<{ items: WebhookDelivery[]; total: number }> {
      const where = sql`d.endpoint_id = ${endpointId} ${query.status ? sql`AND d.status = ${query.status}` : sql``} AND ${ofWorkspace(workspaceId)}`;
      const [count] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM webhook_deliveries d WHERE ${where}`;
      const rows = await sql<DeliveryRow[]>`
        SELECT ${deliveryColumns} FROM webhook_deliveries d WHERE ${where}
        ORDER BY d.created_at DESC, d.id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items: rows.map(presentDelivery), total: count!.total };
    },

    async delivery(workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryDetail | undefined> {
      const [row] = await sql<Array<DeliveryRow & { payload: string }>>`
        SELECT ${deliveryColumns}, ev.body AS payload FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.id = ${deliveryId} AND d.endpoint_id = ${endpointId} AND ${ofWorkspace(workspaceId)}`;
      return row && presentDelivery(row);
    },

    /**
     * A finished delivery (succeeded, as Stripe's and Svix's resend allow, or failed) due
     * again now: any sender attempts it within a moment, with the same webhook-id. Its
     * retry window still runs from its first attempt, so a delivery older than that gets
     * this one attempt; a newer one is retried on the schedule if it fails. A pending one
     * is left as it is (`pending`): it is queued already, and may be in a sender's hands
     * right now, where a second attempt would overlap the first.
     */
    async retryDelivery(workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery | 'pending' | undefined> {
      const delivery = sql`d.id = ${deliveryId} AND d.endpoint_id = ${endpointId} AND ${ofWorkspace(workspaceId)}`;
      // Of concurrent retries, one finds it finished; the others then find it pending. Due
      // and unclaimed: a claim token a finished row may still carry (left by a sender of the
      // previous release) would make its old holder's late outcome decide the resend.
      const [resent] = await sql<DeliveryRow[]>`
        UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), claim_token = NULL
        WHERE ${delivery} AND d.status <> 'pending' RETURNING ${deliveryColumns}`;
      if (resent) return presentDelivery(resent);
      const [queued] = await sql`SELECT 1 FROM webhook_deliveries d WHERE ${delivery}`;
      return queued ? 'pending' : undefined;
    },
  };
}

export type WebhookStore = ReturnType<typeof webhookStore>;

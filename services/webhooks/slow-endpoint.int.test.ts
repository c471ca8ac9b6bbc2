import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createMemoryBus, type MemoryBus } from '../../shared/bus/memory-bus.ts';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { deliveryStore } from './delivery-store.ts';
import { capturedLog } from './testing/captured-log.ts';
import { poller } from './testing/until.ts';
import { startWebhooks, type RunningWebhooks } from './webhooks.ts';

const { logger, recent } = capturedLog();
const until = poller(recent, 30_000);
const BACKLOG = 3_000;

/**
 * One slow endpoint with a backlog of due deliveries larger than a claim's batch (500)
 * must not hold up another endpoint's due delivery: each endpoint is claimed within its
 * own room (README: "a slow endpoint holds up no other"). Before, the batch was the 500
 * oldest due rows of all endpoints, cut to each endpoint's room after, so the slow one's
 * rows filled every batch and the fast one's delivery waited for the whole backlog.
 */
describe('a slow endpoint with a backlog (Postgres, in-process sender)', () => {
  let db: TestDatabase;
  let bus: MemoryBus;
  let webhooks: RunningWebhooks | undefined;
  const receivers: WebhookReceiver[] = [];
  const secret = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    bus = createMemoryBus();
  });
  afterAll(async () => {
    await webhooks?.stop();
    for (const r of receivers) await r.close();
    await bus?.close();
    await db?.close();
  }, 60_000);

  it("does not delay another endpoint's due delivery", async () => {
    const workspaceId = (await createWorkspace(db.sql, { name: 'slow endpoint', plan: 'pro' })).id;
    const slow = await startWebhookReceiver();
    slow.delayMs = () => 500 + Math.random() * 1_000;
    const fast = await startWebhookReceiver();
    receivers.push(slow, fast);
    for (const [id, receiver] of [['wh_slow', slow], ['wh_fast', fast]] as const) {
      await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
        VALUES (${id}, ${workspaceId}, ${`${receiver.url}/hook`}, '{link.created}', ${sealSigningSecret(secret, newSigningSecret())})`;
    }
    const store = deliveryStore(db.sql, 62_000);
    const event = (n: number, endpointId: string) => ({ id: `evt_${endpointId}_${n}`, workspaceId, type: 'link.created', endpointIds: [endpointId], body: `{"n":${n}}` });
    const slowEvents = Array.from({ length: BACKLOG }, (_, n) => event(n, 'wh_slow'));
    await store.record(slowEvents, slowEvents.map((e) => ({ id: `dlv_${e.id}`, eventId: e.id, endpointId: 'wh_slow', eventType: e.type, claim: false })));
    await db.sql`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '10 minutes' WHERE endpoint_id = 'wh_slow'`;
    const fastEvent = event(0, 'wh_fast');
    await store.record([fastEvent], [{ id: 'dlv_fast', eventId: fastEvent.id, endpointId: 'wh_fast', eventType: fastEvent.type, claim: false }]);
    const [due] = await db.sql<{ at: Date }[]>`
      UPDATE webhook_deliveries SET next_attempt_at = now() + interval '5 seconds' WHERE id = 'dlv_fast' RETURNING next_attempt_at AS at`;
    const dueAt = due!.at.getTime();

    webhooks = await startWebhooks({
      sql: db.sql,
      bus,
      secret,
      logger,
      metrics: new Registry(),
      config: {
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: true,
        WEBHOOKS_CONSUMER: 'slow-endpoint',
        WEBHOOKS_TIMEOUT_MS: 10_000,
        WEBHOOKS_RETRY_BASE_MS: 5_000,
        WEBHOOKS_RETRY_WINDOW_MS: 86_400_000,
        WEBHOOKS_CLICK_BATCH_MS: 1_000,
        WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT: 32,
        WEBHOOKS_RETENTION_DAYS: 30,
        WEBHOOKS_CLICK_RETENTION_DAYS: 7,
      },
    });
    const [got] = await until('the fast endpoint\'s delivery', () => fast.received, (r) => r.length > 0, dueAt + 15_000 - Date.now());
    // Waited for its turn in the claims (every 250 ms), not for the slow endpoint's backlog.
    expect({ inTime: got!.at - dueAt < 15_000, slowStillBacklogged: slow.received.length < BACKLOG }).toEqual({ inTime: true, slowStillBacklogged: true });
  }, 60_000);
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { webhookSubjects } from '../../shared/bus/bus.ts';
import { createMemoryBus, type MemoryBus } from '../../shared/bus/memory-bus.ts';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { deliveryStore } from './delivery-store.ts';
import { capturedLog } from './testing/captured-log.ts';
import { poller } from './testing/until.ts';
import { startWebhooks, type RunningWebhooks } from './webhooks.ts';

const { logger, lines, recent } = capturedLog();
const until = poller(recent, 15_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const config = {
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: true,
  WEBHOOKS_CONSUMER: 'foreign-secret',
  WEBHOOKS_TIMEOUT_MS: 10_000,
  WEBHOOKS_RETRY_BASE_MS: 5_000,
  WEBHOOKS_RETRY_WINDOW_MS: 86_400_000,
  WEBHOOKS_CLICK_BATCH_MS: 1_000,
  WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT: 32,
  WEBHOOKS_RETENTION_DAYS: 30,
  WEBHOOKS_CLICK_RETENTION_DAYS: 7,
};

/**
 * A sender started with another LINKROUTE_SECRET than the API's opens no endpoint's signing
 * secret. It must not take the endpoints for deleted: not give up their due deliveries, nor
 * make no delivery for the events it takes from the bus (and acknowledges). It leaves them
 * to a sender with the right secret, and says so.
 */
describe('a sender whose LINKROUTE_SECRET is not the API\'s (Postgres, memory bus)', () => {
  let db: TestDatabase;
  let bus: MemoryBus;
  let receiver: WebhookReceiver;
  const senders: RunningWebhooks[] = [];
  const secret = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    bus = createMemoryBus();
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    for (const s of senders) await s.stop();
    await receiver?.close();
    await bus?.close();
    await db?.close();
  });

  const rows = () => db.sql<{ id: string; status: string; attempts: number; error: string | null }[]>`
    SELECT id, status, attempts, error FROM webhook_deliveries ORDER BY id`;

  it('neither gives up its deliveries nor drops its events; a sender with the right secret sends them', async () => {
    const workspaceId = (await createWorkspace(db.sql, { name: 'foreign secret', plan: 'pro' })).id;
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
      VALUES ('wh_sealed', ${workspaceId}, ${`${receiver.url}/hook`}, '{link.created}', ${sealSigningSecret(secret, newSigningSecret())})`;
    const due = { id: 'evt_due', workspaceId, type: 'link.created', endpointIds: ['wh_sealed'], body: '{"n":1}' };
    await deliveryStore(db.sql, 62_000).record([due], [{ id: 'dlv_a_due', eventId: due.id, endpointId: 'wh_sealed', eventType: due.type, claim: false }]);

    const foreign = await startWebhooks({ sql: db.sql, bus, secret: randomBytes(32), logger, config, metrics: new Registry() });
    senders.push(foreign);
    const event = { id: 'evt_new', workspaceId, type: 'link.created', endpointIds: ['wh_sealed'], body: '{"n":2}' };
    await bus.publishEvent(webhookSubjects.events, new TextEncoder().encode(JSON.stringify(event)), event.id);
    await until('the event taken', () => bus.unacknowledgedEvents(webhookSubjects.events), (n) => n === 0);
    await sleep(2_000);
    expect((await rows()).map(({ status, attempts, error }) => ({ status, attempts, error }))).toEqual([
      { status: 'pending', attempts: 0, error: null },
      { status: 'pending', attempts: 0, error: null },
    ]);
    expect(receiver.received).toEqual([]);
    expect(lines.filter((l) => l.startsWith('error webhook endpoint secret cannot be unsealed'))).toHaveLength(1);
    expect(foreign.signing()).toMatch(/^LINKROUTE_SECRET opens none of the 1 webhook endpoints' signing secrets/);

    const right = await startWebhooks({ sql: db.sql, bus, secret, logger, config, metrics: new Registry() });
    senders.push(right);
    expect(right.signing()).toBe('ok');
    await until('both sent', () => rows(), (r) => r.every((d) => d.status === 'succeeded'));
    expect(receiver.received.map((r) => r.body).sort()).toEqual(['{"n":1}', '{"n":2}']);
  }, 30_000);
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { Registry } from 'prom-client';
import type { Bus } from '../../shared/bus/bus.ts';
import { EVENTS_STREAM } from '../../shared/bus/bus.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { clickIdOrigin } from '../../shared/click-id-origin.ts';
import { createClickId } from '../../shared/click-id.ts';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { newId } from '../../shared/ids.ts';
import { createLogger } from '../../shared/logger.ts';
import { eventSubjects } from '../../shared/schemas/click-event.ts';
import type { WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import { sampleClickEvent } from '../../shared/testing/click-event-fixture.ts';
import { startTestNatsServer, type TestNatsServer } from '../../shared/testing/nats-server.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { startClickBatches } from './click-batches.ts';
import { deliveryStore } from './delivery-store.ts';
import { loadEndpointDirectory, type EndpointDirectory } from './endpoint-directory.ts';
import { poller } from './testing/until.ts';
import { webhooksMetrics } from './webhooks-metrics.ts';

/** The clicks consumer's ack wait here: short, so a batch interval that outlasts it takes seconds (the senders' is 10 s). */
const ACK_WAIT_MS = 3_000;
const logger = createLogger('click-batches-test', 'silent');
const until = poller(() => '', 15_000);

describe('link.clicked batches: clicks held past the ack wait (NATS, Postgres)', () => {
  let nats: TestNatsServer;
  let bus: Bus;
  let nc: NatsConnection;
  let db: TestDatabase;
  let directory: EndpointDirectory;
  const secret = randomBytes(32);

  beforeAll(async () => {
    nats = await startTestNatsServer();
    bus = await connectNatsBus(nats.url, { replicas: 1, name: 'click-batches-test', logger });
    nc = await connect({ servers: nats.url });
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    directory?.stop();
    await nc?.close();
    await bus?.close();
    await nats?.destroy();
    await db?.close();
  });

  it('a click held for a batch interval longer than the ack wait is handed out once', async () => {
    const ws = await createWorkspace(db.sql, { name: 'clicks', plan: 'enterprise' });
    const endpointId = newId('webhook');
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
      VALUES (${endpointId}, ${ws.id}, 'https://hooks.example/clicks', '{link.clicked}', ${sealSigningSecret(secret, newSigningSecret())})`;
    directory = await loadEndpointDirectory({ sql: db.sql, secret, logger });
    const durable = 'clicks-held';
    // Every consumer of this durable opened with the short ack wait (the batcher's own included).
    const shortAckWait: Bus = { ...bus, eventConsumer: (name, subject, options) => bus.eventConsumer(name, subject, { ...options, ackWaitMs: ACK_WAIT_MS }) };
    await shortAckWait.eventConsumer(durable, eventSubjects.clicks, { startAt: 'new' });
    const delivered: WebhookBusEvent[] = [];
    const batches = startClickBatches({
      bus: shortAckWait,
      consumerName: durable,
      directory,
      deliver: async (events) => void delivered.push(...events),
      store: deliveryStore(db.sql, 60_000),
      intervalMs: 2 * ACK_WAIT_MS,
      metrics: webhooksMetrics(new Registry()),
      logger,
      genuine: clickIdOrigin(secret),
    });
    const linkId = newId('link');
    const ts = Date.now();
    const click = sampleClickEvent({ id: createClickId(secret, linkId, ts), ts, workspaceId: ws.id, linkId, kind: 'click', bot: false });
    await bus.publishEvent(eventSubjects.clicks, new TextEncoder().encode(JSON.stringify(click)), 'held-click');

    await until('the batch', () => delivered.length, (n) => n >= 1);
    await batches.stop();
    expect(delivered.map((e) => ({ endpointIds: e.endpointIds, clicks: (JSON.parse(e.body) as { data: { clicks: Array<{ clickId: string }> } }).data.clicks.map((c) => c.clickId) }))).toEqual([
      { endpointIds: [endpointId], clicks: [click.id] },
    ]);
    const info = await (await nc.jetstreamManager()).consumers.info(EVENTS_STREAM, durable);
    expect({ deliveries: info.delivered.consumer_seq, unacked: info.num_ack_pending }).toEqual({ deliveries: 1, unacked: 0 });
  });
});

describe('link.clicked batches: a clean stop (memory bus, Postgres)', () => {
  let db: TestDatabase;
  let directory: EndpointDirectory | undefined;
  const secret = randomBytes(32);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    directory?.stop();
    await db?.close();
  });

  it("makes its last batch an interval after the one before, as any other, and loses no click", async () => {
    const bus = createMemoryBus();
    const ws = await createWorkspace(db.sql, { name: 'clicks stop', plan: 'enterprise' });
    const endpointId = newId('webhook');
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
      VALUES (${endpointId}, ${ws.id}, 'https://hooks.example/clicks', '{link.clicked}', ${sealSigningSecret(secret, newSigningSecret())})`;
    directory = await loadEndpointDirectory({ sql: db.sql, secret, logger, refreshMs: 50 });
    const batchesAt: number[] = [];
    const sent: string[] = [];
    const batches = startClickBatches({
      bus,
      consumerName: 'clicks-stop',
      directory,
      deliver: async (events) => {
        for (const e of events) {
          batchesAt.push(Date.now());
          sent.push(...(JSON.parse(e.body) as { data: { clicks: Array<{ clickId: string }> } }).data.clicks.map((c) => c.clickId));
        }
      },
      store: deliveryStore(db.sql, 60_000),
      intervalMs: 1_000,
      metrics: webhooksMetrics(new Registry()),
      logger,
      genuine: clickIdOrigin(secret),
    });
    // A genuine click every 20 ms until the stop has begun (once the batcher's consumer is open: it starts at new clicks).
    await sleep(200);
    const published: string[] = [];
    let clicking = true;
    const clicks = (async () => {
      for (let n = 0; clicking; n++) {
        const linkId = newId('link');
        const ts = Date.now();
        const click = sampleClickEvent({ id: createClickId(secret, linkId, ts), ts, workspaceId: ws.id, linkId, kind: 'click', bot: false });
        await bus.publishEvent(eventSubjects.clicks, new TextEncoder().encode(JSON.stringify(click)), `stop-click-${n}`);
        published.push(click.id);
        await sleep(20);
      }
    })();

    await until('two batches', () => batchesAt.length, (n) => n >= 2);
    await until('a third', () => batchesAt.length, (n) => n >= 3);
    await sleep(300);
    const stopping = batches.stop();
    clicking = false;
    await clicks;
    await stopping;
    const gaps = batchesAt.slice(1).map((at, i) => at - batchesAt[i]!);
    expect({ batches: batchesAt.length, tooClose: gaps.filter((g) => g < 1_000) }).toEqual({ batches: 4, tooClose: [] });
    // Every click went out once, or is still on the bus for the next sender holding the lease.
    expect(new Set(sent).size).toBe(sent.length);
    expect(sent.length + bus.unacknowledgedEvents(eventSubjects.clicks)).toBe(published.length);
    await bus.close();
  }, 30_000);
});

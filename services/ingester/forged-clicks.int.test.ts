import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { EVENTS_STREAM, FORGED_DEAD_LETTER_SUBJECT, type Bus } from '../../shared/bus/bus.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createLogger } from '../../shared/logger.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import { eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { startTestNatsServer, type TestNatsServer } from '../../shared/testing/nats-server.ts';
import { sample } from '../../shared/testing/prometheus-sample.ts';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { sampleClickEvent } from '../../shared/testing/click-event-fixture.ts';
import { startEventIngesters, type EventIngesters } from './event-ingesters.ts';

/**
 * Click events published straight to NATS by someone other than a redirector (anyone who
 * can publish there) are forged: their click ids were not issued for their link and time
 * under the deployment's secret. The ingesters (as services start them) never store them,
 * dead-letter them to their own subject, count them, and acknowledge them so they are not
 * delivered again; real events beside them are stored.
 */
const logger = createLogger('forged-test', 'silent');
const secret = Buffer.from('the-deployment-secret-0123456789abcdef');
const linkId = 'link_ForgedTest0123456789ab';
const otherLink = 'link_SomeoneElse0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function click(id: string, ts: number, overrides: Partial<ClickEvent> = {}): ClickEvent {
  return sampleClickEvent({
    id, ts, workspaceId: 'ws_forged', linkId, campaignId: 'campaign_forged', visitorId: `v-${id.slice(-6)}`,
    country: 'DE', deviceClass: 'desktop', os: 'linux', browser: 'Firefox', destination: 'https://example.com/', ...overrides,
  });
}

describe('ingester: forged click events', () => {
  let nats: TestNatsServer;
  let ch: TestClickHouse;
  let clickhouse: ClickHouseClient;
  let bus: Bus;
  let attacker: NatsConnection;
  let ingesters: EventIngesters;
  const metrics = createMetricsRegistry();

  beforeAll(async () => {
    [nats, ch] = await Promise.all([startTestNatsServer(), createTestClickHouse()]);
    clickhouse = connectClickHouse(ch.url);
    await migrateClickHouse(clickhouse);
    bus = await connectNatsBus(nats.url, { replicas: 1, name: 'forged-ingester', logger });
    attacker = await connect({ servers: nats.url });
    ingesters = startEventIngesters({ bus, clickhouse, logger, metrics, secret, config: { INGEST_CONSUMER: 'forged', INGEST_MAX_MESSAGES: 20, INGEST_LINGER_MS: 50 } });
  });

  afterAll(async () => {
    await ingesters?.stop();
    await attacker?.close();
    await bus?.close();
    await clickhouse?.close();
    await ch?.close();
    await nats?.destroy();
  });

  it('stores the real ones, dead-letters and counts the forged ones, and acknowledges both', async () => {
    const now = Date.now();
    const real = [click(createClickId(secret, linkId, now), now), click(createClickId(secret, linkId, now + 1), now + 1, { utmContent: 'Grüße' })];
    const borrowed = createClickId(secret, linkId, now + 2);
    const forged = [
      click(createClickId(Buffer.from('a-guessed-secret-0123456789abcdefghij'), linkId, now), now), // another key
      click(borrowed, now + 2, { linkId: otherLink }), // a real id moved to another link
      click(borrowed, now + 3), // ...or to another time
      click(`${borrowed.slice(0, 40)}${borrowed[40] === 'A' ? 'B' : 'A'}${borrowed.slice(41)}`, now + 2), // a tampered id
      click('ck_made-up-by-hand', now), // not a click id at all
      click(createClickId(Buffer.from('a-guessed-secret-0123456789abcdefghij'), linkId, now), now, { utmContent: 'Grüße' }), // and by the zod path
    ];
    const js = attacker.jetstream();
    // As redirectors write them (keys in declaration order): ASCII lines take the fast path, the others zod's.
    const line = (e: ClickEvent) => JSON.stringify(e);
    await js.publish(eventSubjects.clicks, new TextEncoder().encode([real[0]!, ...forged.slice(0, 3), real[1]!].map(line).join('\n')), { msgID: 'forged-mixed' });
    await js.publish(eventSubjects.clicks, new TextEncoder().encode(forged.slice(3).map(line).join('\n')), { msgID: 'forged-only' });

    const counted = async (series: string) => sample(await metrics.metrics(), series) ?? 0;
    const deadline = Date.now() + 30_000;
    while ((await counted('linkroute_ingester_forged_total{kind="clicks"}')) < forged.length || (await counted('linkroute_ingester_rows_inserted_total{kind="clicks"}')) < real.length) {
      if (Date.now() > deadline) break;
      await sleep(50);
    }
    const page = await metrics.metrics();
    expect(sample(page, 'linkroute_ingester_forged_total{kind="clicks"}')).toBe(forged.length);
    expect(sample(page, 'linkroute_ingester_rows_inserted_total{kind="clicks"}')).toBe(real.length);
    expect(sample(page, 'linkroute_ingester_dead_lettered_total{kind="clicks"}')).toBe(0);

    const rows = await (await clickhouse.query({ query: 'SELECT click_id, link_id FROM events ORDER BY ts, click_id', format: 'JSONEachRow' })).json<{ click_id: string; link_id: string }>();
    expect(rows).toEqual(real.map((e) => ({ click_id: e.id, link_id: linkId })));

    // Each forged line, as published, on the forged dead-letter subject.
    const consumer = await bus.eventConsumer('forged-inspector', FORGED_DEAD_LETTER_SUBJECT);
    const dead = (await consumer.fetch(20, 1_000)).map((m) => new TextDecoder().decode(m.data));
    expect(dead.sort()).toEqual(forged.map(line).sort());

    // Both messages acknowledged: nothing is pending or waiting to be delivered again.
    const jsm = await attacker.jetstreamManager();
    const info = await jsm.consumers.info(EVENTS_STREAM, 'forged-clicks');
    expect({ pending: info.num_pending, unacknowledged: info.num_ack_pending, redelivered: info.num_redelivered }).toEqual({ pending: 0, unacknowledged: 0, redelivered: 0 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../shared/logger.ts';
import { createMemoryBus } from '../shared/bus/memory-bus.ts';
import { kvBuckets, type Bus } from '../shared/bus/bus.ts';
import { createTestClickHouse, type TestClickHouse } from '../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../shared/clickhouse/clickhouse-migrate.ts';
import { createClickId } from '../shared/click-id.ts';
import { compileLink } from '../shared/routing/index.ts';
import { makeLink } from '../shared/routing/fixtures.ts';
import { encodeSnapshotEntry } from '../shared/snapshot/snapshot-entry.ts';
import { loadRedirectorConfig } from '../services/redirector/config.ts';
import { startRedirector, type RunningRedirector } from '../services/redirector/redirector.ts';
import { startIngester, type Ingester } from '../services/ingester/ingester.ts';
import { conversionEvents } from '../services/ingester/event-tables.ts';
import { startTestApi, type TestApi } from '../services/api/testing/api-harness.ts';
import { clickHouseLinkCounters } from '../services/api/link-counters.ts';
import { outboxPublisher, type OutboxPublisher } from '../services/api/snapshot/outbox-publisher.ts';
import { sample } from '../shared/testing/prometheus-sample.ts';

const logger = createLogger('pixel-test', 'silent');
const secret = Buffer.alloc(32, 5);

/** The conversion pixel on the redirect domain, through the bus and the ingester into ClickHouse. */
describe('conversion pixel', () => {
  let ch: TestClickHouse;
  let clickhouse: ClickHouseClient;
  let bus: Bus;
  let redirector: RunningRedirector;
  let ingester: Ingester;
  const link = makeLink({ id: 'link_pixelpixelpixelpixel01', shortCode: 'pixel-1', trackingType: 'pixel', conversionTracking: true, workspaceId: 'ws_pixel', campaignId: 'campaign_pixel' });

  const rows = async () =>
    (await clickhouse.query({ query: "SELECT * FROM conversions WHERE workspace_id = 'ws_pixel' ORDER BY ts", format: 'JSONEachRow' })).json<Record<string, unknown>>();

  beforeAll(async () => {
    ch = await createTestClickHouse();
    clickhouse = connectClickHouse(ch.url);
    await migrateClickHouse(clickhouse);
    bus = createMemoryBus();
    await (await bus.kv(kvBuckets.snapshot)).put(link.id, encodeSnapshotEntry({ version: 1, linkId: link.id, link: compileLink(link, [], []) }));
    redirector = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0' }), bus, secret, logger });
    ingester = startIngester({ kind: conversionEvents, bus, clickhouse, logger, consumerName: 'pixel-test', maxMessages: 50, lingerMs: 20 });
  }, 60_000);
  afterAll(async () => {
    await redirector?.close();
    await ingester?.stop();
    await clickhouse?.close();
    await ch?.close();
  });

  it('records a verified pixel hit as an attributed conversion of the click\'s link; forged ids record nothing', async () => {
    const clickId = createClickId(secret, link.id, Date.now() - 60_000);
    const forged = createClickId(Buffer.alloc(32, 6), link.id, Date.now());
    for (const id of [clickId, forged, 'ck_garbage']) {
      const res = await fetch(`${redirector.url}/p.gif?clickId=${encodeURIComponent(id)}&event=purchase&value=12.5&currency=eur&orderId=p-1`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/gif');
    }
    const deadline = Date.now() + 10_000;
    let stored = await rows();
    while (stored.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      stored = await rows();
    }
    await new Promise((r) => setTimeout(r, 300)); // a forged hit would have arrived by now
    expect(await rows()).toEqual([
      expect.objectContaining({ link_id: link.id, campaign_id: 'campaign_pixel', click_id: clickId, event: 'purchase', value: 12.5, currency: 'EUR', order_id: 'p-1', attributed: true, source: 'pixel' }),
    ]);
  });
});

/**
 * The abuse the pixel invited (one click plus 25 pixels gave revenue 2e13), end to end:
 * links from the API, two redirectors and two ingesters on one bus, ClickHouse, and what
 * the API's reports count.
 */
describe('conversion pixel abuse, through two redirectors and two ingesters to the reports', () => {
  let ch: TestClickHouse;
  let clickhouse: ClickHouseClient;
  let bus: Bus;
  let api: TestApi;
  let publisher: OutboxPublisher;
  const redirectors: RunningRedirector[] = [];
  const ingesters: Ingester[] = [];
  let key: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    clickhouse = connectClickHouse(ch.url);
    await migrateClickHouse(clickhouse);
    bus = createMemoryBus();
    api = await startTestApi('postgres', { bus, secret, analytics: clickhouse, counters: clickHouseLinkCounters(clickhouse, logger) });
    publisher = outboxPublisher({ sql: api.db.sql, kv: await bus.kv(kvBuckets.snapshot), logger });
    publisher.start(100);
    for (let i = 0; i < 2; i++) {
      redirectors.push(await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', PIXEL_MAX_VALUE: '1000000' }), bus, secret, logger }));
      ingesters.push(startIngester({ kind: conversionEvents, bus, clickhouse, logger, consumerName: 'pixel-abuse', maxMessages: 5, lingerMs: 20 }));
    }
    ({ key } = await api.tenant());
  }, 60_000);
  afterAll(async () => {
    for (const r of redirectors) await r.close();
    for (const i of ingesters) await i.stop();
    await publisher?.stop();
    await api?.close();
    await clickhouse?.close();
    await ch?.close();
  });

  it('caps each pixel\'s value, folds repeats of a click and event, and counts at most 10 pixel conversions per click', async () => {
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example/thanks', shortCode: 'pixel-abuse', conversionTracking: true, trackingType: 'pixel' } })).body.data;
    await publisher.flush();
    for (const r of redirectors) while (!r.store.findById(link.id)) await new Promise((res) => setTimeout(res, 5));
    const clickIdOf = async () => {
      for (;;) {
        const res = await fetch(`${redirectors[0]!.url}/pixel-abuse`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
        if (res.status === 302) return new URL(res.headers.get('location')!).searchParams.get('clickId')!;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const pixel = async (i: number, query: string) => {
      const res = await fetch(`${redirectors[i % 2]!.url}/p.gif?${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/gif');
      await res.arrayBuffer();
    };
    const refused = async () => (await Promise.all(redirectors.map(async (r) => sample(await (await fetch(`${r.adminUrl}/metrics`)).text(), 'linkroute_redirector_pixel_conversions_refused_total{reason="value_too_large"}') ?? 0))).reduce((a, b) => a + b, 0);

    // 25 pixels of one click and event without an orderId, at the cap: one conversion.
    const repeated = await clickIdOf();
    for (let i = 0; i < 25; i++) await pixel(i, `clickId=${repeated}&event=purchase&value=1000000&currency=EUR`);
    // Above the cap: the GIF, no conversion, counted.
    const greedy = await clickIdOf();
    for (let i = 0; i < 25; i++) await pixel(i, `clickId=${greedy}&event=purchase&value=${i % 2 === 0 ? '1000000.01' : '800000000000'}&currency=EUR`);
    expect(await refused()).toBe(25);
    // 15 distinct orders on one click: 10 count.
    const orders = await clickIdOf();
    for (let i = 0; i < 15; i++) await pixel(i, `clickId=${orders}&event=purchase&value=1&orderId=o-${i}`);
    for (const r of redirectors) await waitPublished(r);

    const report = async () => (await api.request('GET', `/analytics/conversions?linkId=${link.id}&limit=100`, { key })).body.data;
    const deadline = Date.now() + 20_000;
    let counted = await report();
    while (counted.summary.totalConversions < 11 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      counted = await report();
    }
    await new Promise((r) => setTimeout(r, 500)); // anything more would have arrived by now
    counted = await report();
    expect(counted.summary).toMatchObject({ totalConversions: 11, totalRevenue: 1_000_010 });
    expect(counted.conversions.filter((c: { clickId: string }) => c.clickId === repeated)).toHaveLength(1);
    expect(counted.conversions.filter((c: { clickId: string }) => c.clickId === greedy)).toHaveLength(0);
    expect(counted.conversions.filter((c: { clickId: string }) => c.clickId === orders)).toHaveLength(10);
    expect((await api.request('GET', `/links/${link.id}`, { key })).body.data).toMatchObject({ conversions: 11, revenue: 1_000_010 });
    // Stored: the repeats reached ClickHouse at most once per conversion id.
    const stored = await (await clickhouse.query({ query: 'SELECT count() AS n, uniqExact(conversion_id) AS ids FROM conversions WHERE click_id = {c:String}', query_params: { c: repeated }, format: 'JSONEachRow' })).json<{ n: string; ids: string }>();
    expect(Number(stored[0]!.ids)).toBe(1);
  });
});

/** Until the redirector's pixel conversions are all on the bus. */
async function waitPublished(r: RunningRedirector): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${r.adminUrl}/metrics`)).text();
    if (sample(text, 'linkroute_redirector_pixel_conversions_pending') === 0) return;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('pixel conversions still pending');
}

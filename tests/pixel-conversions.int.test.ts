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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from '../../shared/clickhouse/embedded-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { createApiKey } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { startIngester, type Ingester } from '../ingester/ingester.ts';
import { conversionEvents } from '../ingester/event-tables.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

const secret = Buffer.alloc(32, 9);
const DAY = 24 * 3600_000;

/** POST /conversions/s2s through the bus and the conversion ingester into ClickHouse (embedded). */
describe('server-to-server conversions', () => {
  let ch: EmbeddedClickHouse;
  let clickhouse: ClickHouseClient;
  let bus: Bus;
  let ingester: Ingester;
  let api: TestApi;
  let key: string;
  let workspaceId: string;
  let linkId: string;
  let campaignId: string;

  const post = (body: unknown, k = key) => api.request('POST', '/conversions/s2s', { key: k, body });
  const stored = async (conversionId: string) =>
    (await (await clickhouse.query({ query: 'SELECT * FROM conversions WHERE conversion_id = {id:String}', query_params: { id: conversionId }, format: 'JSONEachRow' })).json<Record<string, unknown>>());
  const eventually = async <T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 10_000;
    let value = await read();
    while (!done(value) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      value = await read();
    }
    return value;
  };

  beforeAll(async () => {
    ch = await startEmbeddedClickHouse();
    clickhouse = connectClickHouse(ch.url);
    await migrateClickHouse(clickhouse);
    bus = createMemoryBus();
    const logger = createLogger('test', 'silent');
    ingester = startIngester({ kind: conversionEvents, bus, clickhouse, logger, consumerName: 'conversions-test', maxMessages: 100, lingerMs: 20 });
    api = await startTestApi('postgres', { bus, secret });
    ({ key, workspaceId } = await api.tenant());
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example', conversionTracking: true, trackingType: 's2s' } })).body.data;
    linkId = link.id;
    campaignId = link.campaignId;
  }, 60_000);
  afterAll(async () => {
    await ingester?.stop();
    await api?.close();
    await clickhouse?.close();
    await ch?.stop();
  });

  it('attributes a conversion to its click\'s link and campaign, and stores it once', async () => {
    const clickId = createClickId(secret, linkId, Date.now() - 3_600_000);
    const res = await post({ clickId, event: 'purchase', value: 49.95, currency: 'eur', orderId: 'order-1' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ conversionId: expect.stringMatching(/^conv_/), attributed: true, linkId, campaignId, duplicate: false });
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows).toEqual([
      expect.objectContaining({ workspace_id: workspaceId, link_id: linkId, click_id: clickId, event: 'purchase', value: 49.95, currency: 'EUR', order_id: 'order-1', attributed: true, source: 's2s' }),
    ]);
  });

  it('a repeated orderId answers 200 with duplicate:true and the first conversionId, recording nothing new', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    const first = await post({ clickId, value: 10, orderId: 'order-dup' });
    const again = await post({ click_id: clickId, value: 99, order_id: 'order-dup' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ conversionId: first.body.data.conversionId, attributed: true, linkId, campaignId, duplicate: true });
    await eventually(() => stored(first.body.data.conversionId), (r) => r.length > 0);
    const all = await (await clickhouse.query({ query: "SELECT count() AS n FROM conversions WHERE order_id = 'order-dup'", format: 'JSONEachRow' })).json<{ n: number }>();
    expect(Number(all[0]!.n)).toBe(1);
  });

  it('outside the 30-day window it is recorded but not attributed; defaults apply', async () => {
    const clickAt = Date.now() - 40 * DAY;
    const res = await post({ clickId: createClickId(secret, linkId, clickAt), timestamp: new Date(clickAt + 31 * DAY).toISOString() });
    expect(res.status).toBe(201);
    expect(res.body.data.attributed).toBe(false);
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows[0]).toMatchObject({ event: 'conversion', value: 0, currency: 'USD', order_id: '', attributed: false });
  });

  it('a forged, garbled or foreign click id is a 404', async () => {
    const good = createClickId(secret, linkId, Date.now());
    const tampered = good.slice(0, -2) + (good.endsWith('AA') ? 'BB' : 'AA');
    const otherSecret = createClickId(Buffer.alloc(32, 1), linkId, Date.now());
    const stranger = await api.tenant();
    const theirLink = (await api.request('POST', '/links', { key: stranger.key, body: { destinationUrl: 'https://other.example' } })).body.data.id;
    const foreign = createClickId(secret, theirLink, Date.now());
    for (const clickId of [tampered, otherSecret, 'ck_nope', 'garbage', foreign]) {
      const res = await post({ clickId });
      expect(res.status, clickId).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Click not found' });
    }
    expect((await post({ clickId: foreign }, stranger.key)).status).toBe(201);
  });

  it('refuses bad bodies with the field named', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    const cases: Array<[unknown, string[]]> = [
      [{}, ['clickId']],
      [{ clickId, value: -1 }, ['value']],
      [{ clickId, value: '10' }, ['value']],
      [{ clickId, currency: 'XXY' }, ['currency']],
      [{ clickId, currency: 'US' }, ['currency']],
      [{ clickId, event: 'refund' }, ['event']],
      [{ clickId, timestamp: 'yesterday' }, ['timestamp']],
      [{ clickId, orderId: '' }, ['orderId']],
      [{ clickId, coupon: 'X' }, ['coupon']],
      [{ clickId, click_id: clickId }, ['click_id (duplicate of clickId)']],
    ];
    for (const [body, paths] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toEqual(paths);
    }
  });

  it('needs the conversions:write scope', async () => {
    const readOnly = await createApiKey(api.db.sql, { workspaceId, scopes: ['links:read'] });
    const res = await post({ clickId: createClickId(secret, linkId, Date.now()) }, readOnly.key);
    expect(res.status).toBe(403);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { kvBuckets, type KvBucket } from '../../shared/bus/bus.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/**
 * A clicksLimit set on a link that had none counts the link's clicks so far: the API
 * writes `<linkId>.base` in the click-counts bucket the redirectors sum (their counts
 * of an earlier limit subtracted), from the clicks ClickHouse holds (embedded chDB here).
 */
describe('clicksLimit set on a link with clicks', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let downApi: TestApi;
  let counts: KvBucket;
  let key: string;
  let workspaceId: string;
  const bus = createMemoryBus();

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    counts = await bus.kv(kvBuckets.clickCounts);
    api = await startTestApi('postgres', { bus, analytics: client });
    ({ key, workspaceId } = await api.tenant());
    // ClickHouse unreachable: nothing listens on port 9 of loopback.
    downApi = await startTestApi('postgres', { bus, analytics: connectClickHouse('http://127.0.0.1:9') });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await downApi?.close();
    await client?.close();
    await ch?.close();
  });

  const create = async (body: object = {}) => (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/x', ...body } })).body.data.id as string;
  const clicks = async (linkId: string, n: number, over: { bot?: boolean; kind?: string } = {}) => {
    const rows = Array.from({ length: n }, (_, i) => ({
      workspace_id: workspaceId, link_id: linkId, ts: Date.parse('2026-11-20T10:00:00Z') + i * 1000, click_id: `ck_${linkId}_${over.kind ?? 'click'}_${over.bot ?? false}_${i}`,
      kind: over.kind ?? 'click', campaign_id: 'campaign_x', visitor_id: `v${i}`, country: 'US', device_class: 'desktop', os: '', browser: '',
      referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: 'link', rule_id: '',
      destination: 'https://example.com/x', bot: over.bot ?? false,
    }));
    await client.insert({ table: 'events', values: rows, format: 'JSONEachRow' });
  };
  const base = async (linkId: string) => {
    const entry = await counts.get(`${linkId}.base`);
    return entry === null ? null : Number(new TextDecoder().decode(entry.value!));
  };

  it('counts the clicks a link had (bots and impressions not), less what redirectors counted under an earlier limit', async () => {
    const link = await create();
    await clicks(link, 5);
    await clicks(link, 2, { bot: true });
    await clicks(link, 3, { kind: 'impression' });
    // A redirector counted 2 of those 5 while the link had a limit before.
    await counts.put(`${link}.a1b2c3d4e5f6`, new TextEncoder().encode('2'));
    const patched = await api.request('PATCH', `/links/${link}`, { key, body: { clicksLimit: 10 } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.clicksLimit).toBe(10);
    expect(await base(link)).toBe(3); // 3 + 2 = the link's 5 clicks

    // A limit changed is the same limit counting on: no new base.
    await clicks(link, 1);
    expect((await api.request('PATCH', `/links/${link}`, { key, body: { clicksLimit: 20 } })).status).toBe(200);
    expect(await base(link)).toBe(3);
    // Removed and set again: counted again from the clicks the link has then.
    expect((await api.request('PATCH', `/links/${link}`, { key, body: { clicksLimit: null } })).status).toBe(200);
    expect((await api.request('PATCH', `/links/${link}`, { key, body: { clicksLimit: 7 } })).status).toBe(200);
    expect(await base(link)).toBe(4); // 6 clicks - the redirector's 2
  });

  it('a link created with a limit, or patched in other fields, gets no base; bulk patches get one per link', async () => {
    const limited = await create({ clicksLimit: 3 });
    const plain = await create();
    await clicks(plain, 4);
    expect((await api.request('PATCH', `/links/${plain}`, { key, body: { title: 'renamed' } })).status).toBe(200);
    expect([await base(limited), await base(plain)]).toEqual([null, null]);

    const never = await create();
    const bulk = await api.request('PATCH', '/links/bulk', { key, body: { ids: [plain, never, limited], patch: { clicksLimit: 50 } } });
    expect(bulk.body.data.map((r: { success: boolean }) => r.success)).toEqual([true, true, true]);
    expect([await base(plain), await base(never), await base(limited)]).toEqual([4, 0, null]);
  });

  it('sets the limit all the same when ClickHouse is down (it then counts from now)', async () => {
    const tenant = await downApi.tenant();
    const link = (await downApi.request('POST', '/links', { key: tenant.key, body: { destinationUrl: 'https://example.com/y' } })).body.data.id as string;
    const patched = await downApi.request('PATCH', `/links/${link}`, { key: tenant.key, body: { clicksLimit: 5 } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.clicksLimit).toBe(5);
    expect(await base(link)).toBeNull();
  });
});

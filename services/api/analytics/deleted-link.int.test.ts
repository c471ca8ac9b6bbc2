import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { analyticsOverviewSchema, breakdownRowSchema, experimentReportSchema, realtimeSchema } from '../../../shared/schemas/analytics.ts';
import { mulberry32 } from '../../../shared/testing/seeded-random.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';

/**
 * A deleted link's clicks are history: its own report (/analytics/{linkId}, its
 * experiment) answers by its id as the linkId and link filters do, and a breakdown by
 * link says which rows are deleted links. Expected figures are counted here from the
 * generated clicks; fixed past dates, so the answers hold at any hour.
 */

interface Click {
  workspace_id: string; link_id: string; ts: number; click_id: string; kind: 'click'; campaign_id: string; visitor_id: string;
  country: string; device_class: string; source: string; bot: boolean;
}

const FROM = '2026-03-01';
const TO = '2026-03-07';

describe('analytics of a deleted link', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let b: { key: string; workspaceId: string };
  let retired: { id: string; shortCode: string; campaignId: string };
  let live: { id: string; shortCode: string; campaignId: string };
  const clicks: Click[] = [];
  /** Non-bot clicks of A's link in the range. */
  const countedFor = (linkId: string) => clicks.filter((c) => c.workspace_id === a.workspaceId && c.link_id === linkId && !c.bot).length;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    a = await api.tenant();
    b = await api.tenant();
    const create = async (destinationUrl: string) => (await api.request('POST', '/links', { key: a.key, body: { destinationUrl } })).body.data;
    retired = await create('https://example.com/retired');
    live = await create('https://example.com/live');
    const rand = mulberry32(29);
    const lo = Date.parse('2026-03-02T00:00:00Z');
    const hi = Date.parse('2026-03-06T00:00:00Z');
    const make = (n: number, workspaceId: string, link: { id: string; campaignId: string }): Click => ({
      workspace_id: workspaceId, link_id: link.id, ts: lo + Math.floor(rand() * (hi - lo)), click_id: `ck_del_${n}`, kind: 'click', campaign_id: link.campaignId,
      visitor_id: `v${Math.floor(rand() * 30)}`, country: rand() < 0.5 ? 'US' : 'DE', device_class: 'desktop', source: 'link', bot: rand() < 0.1,
    });
    for (let n = 0; n < 300; n++) clicks.push(make(n, a.workspaceId, n % 3 === 0 ? live : retired));
    // B's rows that carry A's retired link id: B sees no code of A's and is not told A deleted it.
    for (let n = 300; n < 340; n++) clicks.push(make(n, b.workspaceId, retired));
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
    expect((await api.request('DELETE', `/links/${retired.id}`, { key: a.key })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  const get = async (path: string, key = a.key) => {
    const res = await api.request('GET', path, { key });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };

  it('/analytics/{linkId} reads a deleted link by its id, as the linkId filter does', async () => {
    const own = analyticsOverviewSchema.parse((await get(`/analytics/${retired.id}?from=${FROM}&to=${TO}`)).data);
    expect(own.summary.totalClicks).toBe(countedFor(retired.id));
    expect(own.summary.totalClicks).toBeGreaterThan(100);
    expect(own).toEqual(analyticsOverviewSchema.parse((await get(`/analytics?linkId=${retired.id}&from=${FROM}&to=${TO}`)).data));
    // compare=previous too: the period before holds none of its clicks.
    const compared = (await get(`/analytics/${retired.id}?from=${FROM}&to=${TO}&compare=previous`)).data;
    expect(compared.summary.totalClicks).toBe(countedFor(retired.id));
    expect(compared.previous.summary.totalClicks).toBe(0);
  });

  it('its experiment report answers by its id: every click under the default variant', async () => {
    const report = experimentReportSchema.parse((await get(`/analytics/experiments/${retired.id}?from=${FROM}&to=${TO}`)).data);
    expect(report.linkId).toBe(retired.id);
    expect(report.variants.map((v) => [v.variant, v.clicks])).toEqual([['default', countedFor(retired.id)]]);
  });

  it('a deleted link short code names nothing; another workspace gets 404 for its id', async () => {
    for (const path of [`/analytics/${retired.shortCode}`, `/analytics/experiments/${retired.shortCode}`]) {
      const res = await api.request('GET', path, { key: a.key });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe('NOT_FOUND');
    }
    for (const path of [`/analytics/${retired.id}`, `/analytics/experiments/${retired.id}`, `/analytics/${live.id}`]) {
      const res = await api.request('GET', path, { key: b.key });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe('NOT_FOUND');
    }
  });

  it('a breakdown by link marks the deleted link, in JSON and in CSV; another workspace sees neither its code nor its state', async () => {
    const rows = (await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`)).data.map((r: unknown) => breakdownRowSchema.parse(r));
    expect(rows.map((r: any) => ({ value: r.value, label: r.label, shortCode: r.shortCode, deleted: r.deleted, clicks: r.clicks }))).toEqual(
      [
        { value: retired.id, label: retired.shortCode, shortCode: retired.shortCode, deleted: true, clicks: countedFor(retired.id) },
        { value: live.id, label: live.shortCode, shortCode: live.shortCode, deleted: false, clicks: countedFor(live.id) },
      ].sort((x, y) => y.clicks - x.clicks),
    );
    const res = await fetch(`${api.url}/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}&format=csv`, { headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(200);
    const table = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    expect(table.map((r) => [r.value, r.shortCode, r.deleted, Number(r.clicks)])).toEqual(rows.map((r: any) => [r.value, r.shortCode, String(r.deleted), r.clicks]));
    // B: its rows carrying A's link id show the id alone, neither live nor deleted.
    const theirs = (await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`, b.key)).data;
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({ value: retired.id, label: retired.id, shortCode: '', clicks: clicks.filter((c) => c.workspace_id === b.workspaceId && !c.bot).length });
    expect(theirs[0]).not.toHaveProperty('deleted');
  });

  it('top links, in the overview and in realtime, mark the deleted link; another workspace sees neither its code nor its state', async () => {
    const top = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}`)).data).topLinks;
    expect(top.map((l) => ({ linkId: l.linkId, shortCode: l.shortCode, deleted: l.deleted, clicks: l.clicks }))).toEqual(
      [
        { linkId: retired.id, shortCode: retired.shortCode, deleted: true, clicks: countedFor(retired.id) },
        { linkId: live.id, shortCode: live.shortCode, deleted: false, clicks: countedFor(live.id) },
      ].sort((x, y) => y.clicks - x.clicks),
    );
    // Realtime reads the last hour: clicks two minutes old, whatever the hour.
    const now = Date.now();
    const recent = (n: number, workspaceId: string, linkId: string) => ({
      workspace_id: workspaceId, link_id: linkId, ts: now - 120_000, click_id: `ck_del_rt_${n}`, kind: 'click', campaign_id: '', visitor_id: `rt${n}`,
      country: 'US', device_class: 'desktop', source: 'link', bot: false,
    });
    await client.insert({
      table: 'events',
      values: [recent(1, a.workspaceId, retired.id), recent(2, a.workspaceId, retired.id), recent(3, a.workspaceId, live.id), recent(4, b.workspaceId, retired.id)],
      format: 'JSONEachRow',
    });
    const rt = realtimeSchema.parse((await get('/analytics/realtime')).data).topLinks;
    expect(rt).toEqual([
      { linkId: retired.id, shortCode: retired.shortCode, deleted: true, clicks: 2 },
      { linkId: live.id, shortCode: live.shortCode, deleted: false, clicks: 1 },
    ]);
    const theirs = (await get('/analytics/realtime', b.key)).data.topLinks;
    expect(theirs).toEqual([{ linkId: retired.id, shortCode: '', clicks: 1 }]);
    const theirTop = (await get(`/analytics?from=${FROM}&to=${TO}`, b.key)).data.topLinks;
    expect(theirTop).toEqual([{ linkId: retired.id, shortCode: '', clicks: clicks.filter((c) => c.workspace_id === b.workspaceId && !c.bot).length, conversions: 0 }]);
  });
});

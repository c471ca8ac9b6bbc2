import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';
import { parse } from 'csv-parse/sync';
import { clickLogQuerySchema } from '../../../shared/schemas/analytics.ts';
import { clickLogCsv } from './click-log-query.ts';

/**
 * The click log (clickhouse/0012, clicks_by_time) lists and counts a click stored twice once, whether
 * or not its copies are merged yet, on every page; and it holds the clicks stored
 * before its migration ran.
 */
describe('click log', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let key: string;
  let workspaceId: string;
  /** A link of the workspace (a filter on another workspace's, or no, link is a 404). */
  let linkId = '';

  const click = (n: number) => ({
    workspace_id: workspaceId, link_id: linkId, ts: Date.parse('2026-06-10T00:00:00Z') + n * 60_000, click_id: `ck_log_${String(n).padStart(3, '0')}`,
    kind: 'click', campaign_id: '', visitor_id: `v${n}`, country: 'DE', region: n % 2 ? 'Bavaria' : '', city: n % 2 ? 'Munich' : '', device_class: 'mobile', os: '',
    browser: '', referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: 'link', rule_id: '',
    destination: 'https://example.com/log', bot: false,
  });
  /** Click ids of a page, newest first. */
  const page = async (qs: string) => {
    const res = await api.request('GET', `/analytics/clicks?${qs}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { ids: res.body.data.map((c: { clickId: string }) => c.clickId), total: res.body.pagination.total };
  };
  const newest = (from: number, count: number) => Array.from({ length: count }, (_, i) => click(59 - from - i).click_id);

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    ({ key, workspaceId } = await api.tenant());
    linkId = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/log' } })).body.data.id;
    await client.insert({ table: 'events', values: Array.from({ length: 60 }, (_, n) => click(n)), format: 'JSONEachRow' });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  it('lists and counts each click once, however many of the newest are stored twice', async () => {
    // The 40 newest again, as a retried batch that slipped past deduplication: more copies than a page reads to spare.
    await client.insert({ table: 'events', values: Array.from({ length: 40 }, (_, n) => click(20 + n)), format: 'JSONEachRow', clickhouse_settings: { insert_deduplicate: 0 } });
    const stored = await (await client.query({ query: `SELECT count() AS n FROM clicks_by_time WHERE workspace_id = {w:String}`, query_params: { w: workspaceId }, format: 'JSONEachRow' })).json<{ n: number }>();
    expect(Number(stored[0]!.n)).toBe(100);
    expect(await page('limit=10')).toEqual({ ids: newest(0, 10), total: 60 });
    expect(await page('limit=10&page=3')).toEqual({ ids: newest(20, 10), total: 60 });
    expect(await page('limit=25&page=3')).toEqual({ ids: newest(50, 10), total: 60 });
    // One link's log is read from events (its key range there): the same answers.
    expect(await page(`limit=10&page=3&linkId=${linkId}`)).toEqual({ ids: newest(20, 10), total: 60 });
    expect(await page(`limit=25&page=3&linkId=${linkId}`)).toEqual({ ids: newest(50, 10), total: 60 });
    // Merged, the same answers.
    await client.command({ query: 'OPTIMIZE TABLE clicks_by_time FINAL' });
    expect(await page('limit=10&page=3')).toEqual({ ids: newest(20, 10), total: 60 });
  });

  it('folds deep pages in ClickHouse, with the same answers', async () => {
    const tenant = await api.tenant();
    const deep = (n: number) => ({ ...click(n), workspace_id: tenant.workspaceId, click_id: `ck_deep_${String(n).padStart(4, '0')}` });
    await client.insert({ table: 'events', values: Array.from({ length: 1_150 }, (_, n) => deep(n)), format: 'JSONEachRow' });
    // Clicks 0..149 (the oldest, on page 11 of 100) stored twice, not merged.
    await client.insert({ table: 'events', values: Array.from({ length: 150 }, (_, n) => deep(n)), format: 'JSONEachRow', clickhouse_settings: { insert_deduplicate: 0 } });
    const res = await api.request('GET', '/analytics/clicks?limit=100&page=11', { key: tenant.key });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(1_150);
    expect(res.body.data.map((c: { clickId: string }) => c.clickId)).toEqual(Array.from({ length: 100 }, (_, i) => deep(149 - i).click_id));
    const last = await api.request('GET', '/analytics/clicks?limit=100&page=12', { key: tenant.key });
    expect(last.body.data.map((c: { clickId: string }) => c.clickId)).toEqual(Array.from({ length: 50 }, (_, i) => deep(49 - i).click_id));
  });

  it('exports the same clicks, once each, newest first, in windows of any size as in one', async () => {
    const tenant = await api.tenant();
    const own = (await api.request('POST', '/links', { key: tenant.key, body: { destinationUrl: 'https://example.com/log' } })).body.data.id;
    // Minute m holds m % 3 + 1 clicks (two of them at the same instant), the 5 newest stored twice, unmerged.
    const clicks = Array.from({ length: 20 }, (_, m) => Array.from({ length: (m % 3) + 1 }, (_, k) => ({
      ...click(m), workspace_id: tenant.workspaceId, link_id: own, ts: Date.parse('2026-06-12T00:00:00Z') + m * 60_000 + Math.min(k, 1) * 1_000, click_id: `ck_win_${m}_${k}`,
    }))).flat();
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
    await client.insert({ table: 'events', values: clicks.slice(-5), format: 'JSONEachRow', clickhouse_settings: { insert_deduplicate: 0 } });
    const scope = { workspaceId: tenant.workspaceId, includeBots: false, filters: {} };
    const exported = async (query: Record<string, string>, windowRows?: number, linked = false) => {
      const stream = await clickLogCsv(client, linked ? { ...scope, linkId: own } : scope, clickLogQuerySchema.parse(query), undefined, windowRows ? { windowRows } : {});
      const text = (await stream.toArray()).join('');
      // The header once, first, as ClickHouse writes it.
      const header = '"clickId","linkId","campaignId","timestamp","country","region","city","device","os","browser","referrerHost","utmSource","utmMedium","utmCampaign","utmTerm","utmContent","source","ruleId","destination","bot"';
      expect(text.split('\n')[0]).toBe(header);
      expect(text.split(header).length).toBe(2);
      return (parse(text, { columns: true }) as Array<{ clickId: string }>).map((r) => r.clickId);
    };
    for (const [query, linked] of [[{}, false], [{}, true], [{ from: '2026-06-12T00:04:00Z', to: '2026-06-12T00:13:00Z' }, false], [{ from: '2026-06-12T00:04:00Z', to: '2026-06-12T00:13:00Z' }, true]] as const) {
      const res = await api.request('GET', `/analytics/clicks?limit=100&${new URLSearchParams({ ...query, ...(linked ? { linkId: own } : {}) })}`, { key: tenant.key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const listed = res.body.data.map((c: { clickId: string }) => c.clickId);
      expect(listed.length).toBe(query.from ? 18 : 39);
      expect(await exported(query, undefined, linked)).toEqual(listed);
      for (const windowRows of [1, 5]) expect(await exported(query, windowRows, linked), `windows of ${windowRows}, ${JSON.stringify(query)}, linked ${linked}`).toEqual(listed);
    }
    // No clicks in the range: the header alone.
    expect(await exported({ from: '2026-06-13', to: '2026-06-13' }, 1)).toEqual([]);
  });

  it('0012 copies the clicks stored before it, once, with region, city and destination', async () => {
    const before = await page('limit=100');
    await client.command({ query: 'DROP VIEW IF EXISTS clicks_by_time_mv' });
    await client.command({ query: 'DROP TABLE IF EXISTS clicks_by_time' });
    const forget = () => client.command({ query: `DELETE FROM schema_migrations WHERE version = '0012_clicks_by_time'` });
    const stored = async () =>
      Number((await (await client.query({ query: `SELECT count() AS n FROM clicks_by_time WHERE workspace_id = {w:String}`, query_params: { w: workspaceId }, format: 'JSONEachRow' })).json<{ n: number }>())[0]!.n);
    await forget();
    expect(await migrateClickHouse(client)).toEqual(['0012_clicks_by_time']);
    expect(await page('limit=100')).toEqual(before);
    const copied = await stored();
    expect(copied).toBeGreaterThanOrEqual(60);
    const placed = (await api.request('GET', '/analytics/clicks?limit=1&city=Munich', { key })).body;
    expect(placed.data[0]).toMatchObject({ region: 'Bavaria', city: 'Munich', destination: 'https://example.com/log' });
    expect(placed.pagination.total).toBe(30);
    // A second instance that did not see the record: the table is not empty, nothing is copied again.
    await forget();
    expect(await migrateClickHouse(client)).toEqual(['0012_clicks_by_time']);
    expect(await stored()).toBe(copied);
    // And the view is back.
    await client.insert({ table: 'events', values: [click(60)], format: 'JSONEachRow' });
    expect((await page('limit=1')).ids).toEqual([click(60).click_id]);
  });

  it('takes dates as local days of `timezone`, both ends included, and refuses an unknown zone', async () => {
    const tenant = await api.tenant();
    // Clicks on either side of the local midnights of 2026-06-10 and 2026-06-11 in Kolkata
    // (+05:30: 2026-06-09T18:30Z and 2026-06-10T18:30Z) and New York (-04:00 in June).
    const at = ['2026-06-09T18:29:59.999Z', '2026-06-09T18:30:00Z', '2026-06-10T03:59:59.999Z', '2026-06-10T04:00:00Z', '2026-06-10T18:29:59.999Z', '2026-06-10T18:30:00Z', '2026-06-11T03:59:59.999Z', '2026-06-11T04:00:00Z'];
    await client.insert({
      table: 'events',
      values: at.map((iso, n) => ({ ...click(n), workspace_id: tenant.workspaceId, ts: Date.parse(iso), click_id: `ck_zone_${n}` })),
      format: 'JSONEachRow',
    });
    const ids = async (qs: string) => {
      const res = await api.request('GET', `/analytics/clicks?limit=100&${qs}`, { key: tenant.key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((c: { clickId: string }) => c.clickId).reverse();
    };
    expect(await ids('from=2026-06-10&to=2026-06-10&timezone=Asia/Kolkata')).toEqual(['ck_zone_1', 'ck_zone_2', 'ck_zone_3', 'ck_zone_4']);
    expect(await ids('from=2026-06-10&to=2026-06-10&timezone=America/New_York')).toEqual(['ck_zone_3', 'ck_zone_4', 'ck_zone_5', 'ck_zone_6']);
    expect(await ids('from=2026-06-10&to=2026-06-10')).toEqual(['ck_zone_2', 'ck_zone_3', 'ck_zone_4', 'ck_zone_5']);
    // Instants are taken as given, whatever the zone.
    expect(await ids('from=2026-06-10T04:00:00Z&to=2026-06-10T18:30:00Z&timezone=Asia/Kolkata')).toEqual(['ck_zone_3', 'ck_zone_4']);
    const bad = await api.request('GET', '/analytics/clicks?from=2026-06-10&timezone=Mars/Olympus', { key: tenant.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(bad.body.error)).toContain('timezone');
  });

  it('0012 drops 0006\'s click_log and its view', async () => {
    const tables = await (await client.query({ query: `SELECT name FROM system.tables WHERE database = currentDatabase()`, format: 'JSONEachRow' })).json<{ name: string }>();
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['clicks_by_time', 'clicks_by_time_mv']));
    expect(tables.map((t) => t.name)).not.toContain('click_log');
    expect(tables.map((t) => t.name)).not.toContain('click_log_mv');
  });
});

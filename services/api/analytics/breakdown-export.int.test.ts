import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import type { ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import type { TestApi } from '../testing/api-harness.ts';
import { startAnalyticsTestApi, type AnalyticsTestApi } from '../testing/analytics-harness.ts';

/**
 * A breakdown's CSV export holds every value, however many pages the JSON has: 1,150
 * links and 1,150 cities, more than one page of the largest (1,000) and more than one
 * chunk of the export's labelling, parsed back and compared with the JSON pages put
 * together. Fixed past dates, so the answers hold at any hour.
 */
const FROM = '2026-03-01';
const TO = '2026-03-07';
const LINKS = 1_150;

describe('breakdown CSV export: every value', () => {
  let env: AnalyticsTestApi;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let b: { key: string; workspaceId: string };
  let links: Array<{ id: string; campaignId: string; shortCode: string }>;
  let campaignId: string;

  beforeAll(async () => {
    env = await startAnalyticsTestApi();
    ({ api, clickhouse: client } = env);
    [a, b] = [await api.tenant(), await api.tenant()];
    campaignId = (await api.request('POST', '/campaigns', { key: a.key, body: { name: 'Spring' } })).body.data.id;
    links = [];
    for (let start = 0; start < LINKS; start += 1_000) {
      const count = Math.min(1_000, LINKS - start);
      const res = await api.request('POST', '/links/bulk', {
        key: a.key,
        // Half the links in the campaign, so a campaign's export (one pass in JSON too) has more than a page of cities.
        body: { links: Array.from({ length: count }, (_, i) => ({ destinationUrl: `https://example.com/${start + i}`, ...((start + i) % 2 === 0 ? { campaignId } : {}) })) },
      });
      expect(res.status).toBe(200);
      links.push(...res.body.data.map((item: { success: boolean; data: { id: string; campaignId: string; shortCode: string } }) => item.data));
    }
    const day = Date.parse('2026-03-03T10:00:00Z');
    const click = (i: number, n: number, extra: Record<string, unknown> = {}) => ({
      workspace_id: a.workspaceId, link_id: links[i]!.id, campaign_id: links[i]!.campaignId, kind: 'click', ts: day + i * 1_000 + n,
      click_id: `ck_bx_${i}_${n}`, visitor_id: `v${i}_${n}`, country: 'DE', city: `City ${String(i).padStart(4, '0')}`, device_class: 'desktop', os: 'linux',
      source: 'link', rule_id: '', destination: links[i]!.id, bot: false, ...extra,
    });
    const clicks = links.flatMap((_, i) => Array.from({ length: i < 60 ? 1 + (i % 7) : 1 }, (_, n) => click(i, n)));
    // Excluded: bots, and another workspace's clicks.
    clicks.push(click(0, 100, { bot: true }), { ...click(1, 101), workspace_id: b.workspaceId, city: 'Elsewhere' });
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
    await client.insert({
      table: 'conversions',
      values: [3, 500, 1_100].map((i) => ({
        workspace_id: a.workspaceId, link_id: links[i]!.id, campaign_id: links[i]!.campaignId, event: 'purchase', value: 2.5, attributed: true, source: 's2s',
        ts: day + i * 1_000 + 60_000, conversion_id: `conv_bx_${i}`, click_id: `ck_bx_${i}_0`, currency: 'EUR', order_id: `o${i}`,
      })),
      format: 'JSONEachRow',
    });
  }, 180_000);
  afterAll(async () => {
    await env?.close();
  });

  const csv = async (key: string, path: string) => {
    const res = await fetch(`${api.url}${path}&format=csv`, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="breakdown-/);
    return { header: text.split('\n', 1)[0]!, rows: parse(text, { columns: true }) as Record<string, string>[] };
  };
  /** Every JSON page of the breakdown, put together. */
  const allPages = async (path: string) => {
    const rows: Array<Record<string, unknown>> = [];
    for (let page = 1; ; page++) {
      const res = await api.request('GET', `${path}&limit=1000&page=${page}`, { key: a.key });
      expect(res.status).toBe(200);
      rows.push(...res.body.data);
      if (page * 1_000 >= res.body.pagination.total) return { rows, total: res.body.pagination.total as number };
    }
  };
  /** A JSON row as its CSV cells: null and absent empty, the rest as written. */
  const cells = (row: Record<string, unknown>, columns: string[]) => Object.fromEntries(columns.map((c) => [c, row[c] === null || row[c] === undefined ? '' : String(row[c])]));

  it.each([
    ['link, the whole workspace', `/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`, LINKS],
    ['city, the whole workspace', `/analytics/breakdown?dimension=city&from=${FROM}&to=${TO}`, LINKS],
    ['city, one campaign', `/analytics/breakdown?dimension=city&from=${FROM}&to=${TO}&campaignId=CAMPAIGN`, LINKS / 2],
  ])('%s: the CSV holds every row of every JSON page, in their order', async (_, template, expected) => {
    const path = template.replace('CAMPAIGN', campaignId);
    const json = await allPages(path);
    expect(json.total).toBe(expected);
    const exported = await csv(a.key, path);
    const columns = exported.header.split(',');
    expect(columns).toEqual(['value', 'label', ...(path.includes('dimension=link') ? ['shortCode', 'domain', 'deleted'] : []), 'clicks', 'uniqueClicks', 'conversions', 'revenue', 'conversionRate']);
    expect(exported.rows.length).toBe(expected);
    expect(exported.rows).toEqual(json.rows.map((r) => cells(r, columns)));
    // What the data says, independently of the JSON: the most clicked first, each click once, no bot, no other workspace.
    expect(exported.rows[0]).toMatchObject({ clicks: '7', uniqueClicks: '7' });
    expect(exported.rows.reduce((sum, r) => sum + Number(r.clicks), 0)).toBe(
      Array.from({ length: LINKS }, (_, i) => (i < 60 ? 1 + (i % 7) : 1)).filter((__, i) => !path.includes('campaignId') || i % 2 === 0).reduce((x, y) => x + y, 0),
    );
    expect(exported.rows.some((r) => r.value === 'Elsewhere')).toBe(false);
    const converted = exported.rows.filter((r) => r.conversions !== '0');
    expect(converted.map((r) => r.revenue)).toEqual(path.includes('campaignId') ? ['2.5', '2.5'] : ['2.5', '2.5', '2.5']);
  });

  it('link rows carry their short codes past the first chunk', async () => {
    const { rows } = await csv(a.key, `/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`);
    const codes = new Map(links.map((l) => [l.id, l.shortCode]));
    expect(rows.length).toBe(LINKS);
    expect(rows.every((r) => r.shortCode === codes.get(r.value!) && r.label === r.shortCode && r.deleted === 'false')).toBe(true);
  });

  it('with limit or page, the CSV is that page, as before', async () => {
    const base = `/analytics/breakdown?dimension=city&from=${FROM}&to=${TO}`;
    const firstFive = await csv(a.key, `${base}&limit=5`);
    expect(firstFive.rows.map((r) => r.clicks)).toEqual(['7', '7', '7', '7', '7']);
    const { rows: lastPage } = await csv(a.key, `${base}&limit=1000&page=2`);
    expect(lastPage.length).toBe(LINKS - 1_000);
    const json = (await api.request('GET', `${base}&limit=1000&page=2`, { key: a.key })).body.data;
    expect(lastPage.map((r) => r.value)).toEqual(json.map((r: { value: string }) => r.value));
  });

  it('a range without clicks exports the header row alone; another workspace sees none of these values', async () => {
    const empty = await csv(a.key, `/analytics/breakdown?dimension=link&from=2026-02-01&to=2026-02-02`);
    expect(empty.header).toBe('value,label,shortCode,domain,deleted,clicks,uniqueClicks,conversions,revenue,conversionRate');
    expect(empty.rows).toEqual([]);
    const other = await csv(b.key, `/analytics/breakdown?dimension=city&from=${FROM}&to=${TO}`);
    expect(other.rows.map((r) => [r.value, r.clicks])).toEqual([['Elsewhere', '1']]);
  });

  it('HEAD answers the headers and lets the export statement go: more HEADs than the ClickHouse client has connections, then a read, each answered at once', async () => {
    // Without letting go, each HEAD kept one of the client's 10 connections with its
    // answer unread until the engine's keep-alive (10 s) closed it: the 11th request waited that long.
    for (let i = 0; i < 15; i++) {
      const res = await fetch(`${api.url}/analytics/breakdown?dimension=city&from=${FROM}&to=${TO}&format=csv`, { method: 'HEAD', headers: { authorization: `Bearer ${a.key}` }, signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    }
    const res = await fetch(`${api.url}/analytics/breakdown?dimension=city&from=${FROM}&to=${TO}&limit=3`, { headers: { authorization: `Bearer ${a.key}` }, signal: AbortSignal.timeout(5_000) });
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(3);
  });

  it('bad input is a 400 in the error envelope, as for JSON', async () => {
    for (const query of ['dimension=nope', 'dimension=city&limit=0', 'dimension=city&page=0', 'dimension=city&from=2026-13-01']) {
      const res = await api.request('GET', `/analytics/breakdown?${query}&format=csv`, { key: a.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('VALIDATION_ERROR');
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { createLogger } from '../../../shared/logger.ts';
import { clickHouseLinkCounters } from '../link-counters.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';

/**
 * Conversions in the overview: attributed only, each order once at its first
 * conversion in the range (day and link), the top links' counts beside their clicks.
 * Rows go straight into ClickHouse, so pixel repeats and late duplicates can be staged.
 */
describe('overview conversions', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let key: string;
  let workspaceId: string;
  let a: string;
  let b: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    // The links' counters too (conversions: 0 without them), read when asked.
    api = await startTestApi('postgres', { analytics: client, counters: clickHouseLinkCounters(client, createLogger('test', 'silent'), { keepWarmMs: 0 }) });
    ({ key, workspaceId } = await api.tenant());
    a = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example/a' } })).body.data.id;
    b = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example/b' } })).body.data.id;

    const click = (link: string, n: number, iso: string) => ({
      workspace_id: workspaceId, link_id: link, ts: Date.parse(iso), click_id: `ck_${link}_${n}`, kind: 'click', campaign_id: '', visitor_id: `v${n}`,
      country: 'DE', device_class: 'mobile', os: '', browser: '', referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '',
      utm_content: '', source: 'link', rule_id: '', destination: '', bot: false,
    });
    // a: 3 clicks, b: 2, so a leads the top links.
    await client.insert({
      table: 'events',
      values: [click(a, 1, '2026-06-10T08:00:00Z'), click(a, 2, '2026-06-10T09:00:00Z'), click(a, 3, '2026-06-11T09:00:00Z'), click(b, 1, '2026-06-11T10:00:00Z'), click(b, 2, '2026-06-11T11:00:00Z')],
      format: 'JSONEachRow',
    });
    const conversion = (id: string, link: string, iso: string, over: Partial<{ order_id: string; value: number; attributed: boolean; source: string }> = {}) => ({
      workspace_id: workspaceId, link_id: link, ts: Date.parse(iso), conversion_id: id, click_id: `ck_${link}_1`, campaign_id: '', event: 'purchase',
      value: 10, currency: 'EUR', order_id: '', attributed: true, source: 'pixel', ...over,
    });
    await client.insert({
      table: 'conversions',
      values: [
        conversion('conv_1', a, '2026-06-10T10:00:00Z', { order_id: 'o-1', value: 10 }),
        conversion('conv_2', a, '2026-06-11T10:00:00Z', { order_id: 'o-1', value: 10 }), // the pixel fired again the next day: still one order, on the 10th
        conversion('conv_3', b, '2026-06-11T12:00:00Z', { order_id: 'o-2', value: 5, source: 's2s' }),
        conversion('conv_4', b, '2026-06-11T13:00:00Z', { value: 1 }), // no order id: counted as itself
        conversion('conv_5', a, '2026-06-11T14:00:00Z', { value: 100, attributed: false }), // outside the attribution window
        conversion('conv_6', a, '2026-06-13T10:00:00Z', { value: 100 }), // outside the range
      ],
      format: 'JSONEachRow',
    });
    // The same conversion stored twice (a retried batch that slipped past deduplication) still counts once.
    await client.insert({ table: 'conversions', values: [conversion('conv_4', b, '2026-06-11T13:00:00Z', { value: 1 })], format: 'JSONEachRow', clickhouse_settings: { insert_deduplicate: 0 } });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  it('counts each order once, on its first day and link, and gives the top links their conversions', async () => {
    const res = await api.request('GET', '/analytics?from=2026-06-10&to=2026-06-12', { key });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.summary).toEqual({ totalClicks: 5, uniqueClicks: 3, conversions: 3, revenue: 16, conversionRate: 60 });
    expect(data.timeSeries).toEqual([
      { date: '2026-06-10', clicks: 2, uniqueClicks: 2, conversions: 1 },
      { date: '2026-06-11', clicks: 3, uniqueClicks: 3, conversions: 2 },
      { date: '2026-06-12', clicks: 0, uniqueClicks: 0, conversions: 0 },
    ]);
    expect(data.topLinks.map((l: { linkId: string; clicks: number; conversions: number }) => [l.linkId, l.clicks, l.conversions])).toEqual([
      [a, 3, 1],
      [b, 2, 2],
    ]);
    // A range that starts after the first conversion of o-1 does not count its repeat: o-1 is the 10th's, whatever range is asked.
    const later = (await api.request('GET', '/analytics?from=2026-06-11&to=2026-06-11', { key })).body.data;
    expect(later.summary).toMatchObject({ conversions: 2, revenue: 6 });
    expect(later.topLinks.map((l: { linkId: string; conversions: number }) => [l.linkId, l.conversions])).toEqual([[b, 2], [a, 0]]);
    // The same on one link's report.
    const linkA = (await api.request('GET', `/analytics/${a}?from=2026-06-10&to=2026-06-12`, { key })).body.data;
    expect(linkA.summary).toEqual({ totalClicks: 3, uniqueClicks: 3, conversions: 1, revenue: 10, conversionRate: 33.33 });
    expect(linkA.topLinks).toEqual([{ linkId: a, shortCode: expect.any(String), deleted: false, clicks: 3, conversions: 1 }]);
  });

  it('counts an order, and a click\'s pixel conversions, in the same place whatever range is asked: the days add up to the range', async () => {
    const t = await api.tenant();
    const link = (await api.request('POST', '/links', { key: t.key, body: { destinationUrl: 'https://shop.example/days' } })).body.data.id as string;
    await client.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: ['ck_d1', 'ck_d2', 'ck_d3'].map((clickId, n) => ({
        workspace_id: t.workspaceId, link_id: link, ts: Date.parse('2026-07-01T08:00:00Z') + n * 60_000, click_id: clickId, kind: 'click', campaign_id: '', visitor_id: `v${n}`,
        country: 'DE', device_class: 'mobile', os: '', browser: '', referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '',
        source: 'link', rule_id: '', destination: '', bot: false,
      })),
    });
    const conversion = (id: string, click: string, iso: string, value: number, over: Partial<{ order_id: string; attributed: boolean; source: string }> = {}) => ({
      workspace_id: t.workspaceId, link_id: link, ts: Date.parse(iso), conversion_id: id, click_id: click, campaign_id: '', event: 'purchase',
      value, currency: 'EUR', order_id: '', attributed: true, source: 'pixel', ...over,
    });
    await client.insert({
      table: 'conversions',
      format: 'JSONEachRow',
      values: [
        // o-late: a pixel on the 1st with a guessed value, its postback on the 2nd: the postback's, on the 2nd.
        conversion('conv_d_1', 'ck_d1', '2026-07-01T10:00:00Z', 1, { order_id: 'o-late' }),
        conversion('conv_d_2', 'ck_d1', '2026-07-02T10:00:00Z', 50, { order_id: 'o-late', source: 's2s' }),
        // o-out: its postback says its click is outside the window; a pixel claiming it for a click is not the order.
        conversion('conv_d_3', 'ck_d2', '2026-07-01T09:00:00Z', 70, { order_id: 'o-out', source: 's2s', attributed: false }),
        conversion('conv_d_4', 'ck_d2', '2026-07-01T12:00:00Z', 2, { order_id: 'o-out' }),
        // ck_d3: 10 pixel conversions on the 1st (the most counted per click), 2 more on the 2nd, none of them counted.
        ...Array.from({ length: 12 }, (_, i) => conversion(`conv_d_p${i}`, 'ck_d3', i < 10 ? `2026-07-01T13:${String(i).padStart(2, '0')}:00Z` : `2026-07-02T13:0${i}:00Z`, 3)),
      ],
    });
    const summary = async (from: string, to: string) => (await api.request('GET', `/analytics/${link}?from=${from}&to=${to}`, { key: t.key })).body.data.summary;
    expect(await summary('2026-07-01', '2026-07-01')).toMatchObject({ conversions: 10, revenue: 30 });
    expect(await summary('2026-07-02', '2026-07-02')).toMatchObject({ conversions: 1, revenue: 50 });
    expect(await summary('2026-07-01', '2026-07-02')).toMatchObject({ conversions: 11, revenue: 80 });
    const series = (await api.request('GET', `/analytics?from=2026-07-01&to=2026-07-03`, { key: t.key })).body.data.timeSeries;
    expect(series.map((d: { conversions: number }) => d.conversions)).toEqual([10, 1, 0]);
    // The conversions report and the link's counters count the same rows.
    const report = (await api.request('GET', `/analytics/conversions?from=2026-07-02&to=2026-07-02`, { key: t.key })).body.data;
    expect(report.conversions.map((c: { conversionId: string; value: number }) => [c.conversionId, c.value])).toEqual([['conv_d_2', 50]]);
    const counters = (await api.request('GET', `/links/${link}`, { key: t.key })).body.data;
    expect(counters).toMatchObject({ conversions: 11, revenue: 80 });
  });

  it('splits conversions by the source of their click, as it splits clicks', async () => {
    const tenant = await api.tenant();
    const link = (await api.request('POST', '/links', { key: tenant.key, body: { destinationUrl: 'https://shop.example/qr' } })).body.data.id;
    const click = (n: number, source: string, iso: string) => ({
      workspace_id: tenant.workspaceId, link_id: link, ts: Date.parse(iso), click_id: `ck_${link}_${n}`, kind: 'click', campaign_id: '', visitor_id: `v${n}`,
      country: 'DE', device_class: 'mobile', os: '', browser: '', referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '',
      utm_content: '', source, rule_id: '', destination: '', bot: false,
    });
    // The qr click of the last conversion lies 20 days before the range: still within its attribution window.
    await client.insert({
      table: 'events',
      values: [click(1, 'link', '2026-06-10T08:00:00Z'), click(2, 'qr', '2026-06-10T09:00:00Z'), click(3, 'qr', '2026-06-11T09:00:00Z'), click(4, 'qr', '2026-05-21T09:00:00Z')],
      format: 'JSONEachRow',
    });
    const conversion = (id: string, clickN: number, iso: string, value: number, orderId = '') => ({
      workspace_id: tenant.workspaceId, link_id: link, ts: Date.parse(iso), conversion_id: id, click_id: `ck_${link}_${clickN}`, campaign_id: '', event: 'purchase',
      value, currency: 'EUR', order_id: orderId, attributed: true, source: 'pixel',
    });
    await client.insert({
      table: 'conversions',
      values: [
        conversion('conv_q1', 1, '2026-06-10T10:00:00Z', 10),
        conversion('conv_q2', 2, '2026-06-10T11:00:00Z', 20, 'o-q'),
        conversion('conv_q3', 2, '2026-06-11T11:00:00Z', 20, 'o-q'), // the pixel again: one order
        conversion('conv_q4', 99, '2026-06-11T12:00:00Z', 5), // its click was never stored: no source
        conversion('conv_q5', 4, '2026-06-12T12:00:00Z', 7),
      ],
      format: 'JSONEachRow',
    });
    const summary = async (query: string) => (await api.request('GET', `/analytics${query}`, { key: tenant.key })).body.data.summary;
    const range = 'from=2026-06-10&to=2026-06-12';
    expect(await summary(`?${range}&source=qr`)).toEqual({ totalClicks: 2, uniqueClicks: 2, conversions: 2, revenue: 27, conversionRate: 100 });
    expect(await summary(`?${range}&source=link`)).toEqual({ totalClicks: 1, uniqueClicks: 1, conversions: 1, revenue: 10, conversionRate: 100 });
    expect(await summary(`?${range}`)).toEqual({ totalClicks: 3, uniqueClicks: 3, conversions: 4, revenue: 42, conversionRate: 133.33 });
    expect(await summary(`/${link}?${range}&source=qr`)).toEqual({ totalClicks: 2, uniqueClicks: 2, conversions: 2, revenue: 27, conversionRate: 100 });
    const series = (await api.request('GET', `/analytics?${range}&source=qr`, { key: tenant.key })).body.data.timeSeries;
    expect(series.map((b: { conversions: number }) => b.conversions)).toEqual([1, 0, 1]);
  });

  it('in a 30-minute zone, a click and its conversion of one minute share their hour and day bucket, filtered or not', async () => {
    const t = await api.tenant();
    const link = (await api.request('POST', '/links', { key: t.key, body: { destinationUrl: 'https://shop.example/kolkata' } })).body.data.id as string;
    const row = { workspace_id: t.workspaceId, link_id: link, campaign_id: '', visitor_id: 'v1', country: 'IN', device_class: 'mobile', os: '', browser: '', referrer_host: '',
      utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: 'link', rule_id: '', destination: '', bot: false, kind: 'click' };
    // 03:58Z is 09:28 in Kolkata, in the UTC hour that starts at 08:30 there; 18:45Z is 00:15 the next local day, in the hour that starts at 23:30.
    await client.insert({ table: 'events', format: 'JSONEachRow', values: [{ ...row, ts: Date.parse('2026-06-20T03:58:00Z'), click_id: 'ck_kol_1' }, { ...row, ts: Date.parse('2026-06-20T18:45:00Z'), click_id: 'ck_kol_2' }] });
    const conversion = (id: string, click: string, iso: string) => ({ workspace_id: t.workspaceId, link_id: link, ts: Date.parse(iso), conversion_id: id, click_id: click, campaign_id: '',
      event: 'purchase', value: 10, currency: 'EUR', order_id: id, attributed: true, source: 's2s' });
    await client.insert({ table: 'conversions', format: 'JSONEachRow', values: [conversion('conv_kol_1', 'ck_kol_1', '2026-06-20T03:59:00Z'), conversion('conv_kol_2', 'ck_kol_2', '2026-06-20T18:46:00Z')] });
    const zone = 'timezone=Asia%2FKolkata';
    for (const filter of ['', '&country=IN']) {
      const hours = (await api.request('GET', `/analytics?from=2026-06-20&to=2026-06-20&granularity=hour&${zone}${filter}`, { key: t.key })).body.data;
      const busy = hours.timeSeries.filter((b: { clicks: number; conversions: number }) => b.clicks + b.conversions > 0);
      // Each hour is labelled by the local hour it starts in (08:30 -> 08:00, 23:30 -> 23:00).
      expect(busy, filter).toEqual([
        expect.objectContaining({ date: '2026-06-20T08:00', clicks: 1, conversions: 1 }),
        expect.objectContaining({ date: '2026-06-20T23:00', clicks: 1, conversions: 1 }),
      ]);
      expect(hours.summary, filter).toMatchObject({ totalClicks: 2, conversions: 2 });
      const days = (await api.request('GET', `/analytics?from=2026-06-20&to=2026-06-21&granularity=day&${zone}${filter}`, { key: t.key })).body.data;
      expect(days.timeSeries.map((b: { date: string; clicks: number; conversions: number }) => [b.date, b.clicks, b.conversions]), filter).toEqual([
        ['2026-06-20', 2, 2],
        ['2026-06-21', 0, 0],
      ]);
    }
  });
});

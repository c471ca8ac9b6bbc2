import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { toEventRow } from '../../../shared/clickhouse/events-table.ts';
import { sampleClickEvent } from '../../../shared/testing/click-event-fixture.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';

/**
 * Ranges of instants (`from=2026-06-10T11:00:00Z`): reports count whole UTC hours from
 * `from` up to `to` (exclusive), rounded outwards to the hour; the click log takes
 * instants as given. Clicks and conversions are stamped at fixed instants around the
 * hour boundaries, so every expected figure is counted by hand below.
 */
describe('analytics over ranges of instants', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let key: string;
  let a: string;
  let b: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    let workspaceId: string;
    ({ key, workspaceId } = await api.tenant());
    a = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example/a' } })).body.data.id;
    b = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example/b' } })).body.data.id;
    const click = (link: string, n: number, iso: string, country: string) =>
      toEventRow(sampleClickEvent({ workspaceId, linkId: link, ts: Date.parse(iso), id: `ck_${link}_${n}`, visitorId: `v${link}${n}`, country }));
    await client.insert({
      table: 'events',
      values: [
        click(a, 1, '2026-06-09T23:30:00Z', 'FR'),
        click(a, 2, '2026-06-10T10:30:00Z', 'DE'),
        click(a, 3, '2026-06-10T11:15:00Z', 'US'),
        click(b, 1, '2026-06-10T12:59:59.999Z', 'DE'),
        click(a, 4, '2026-06-10T13:00:00Z', 'DE'),
        click(b, 2, '2026-06-11T00:10:00Z', 'US'),
      ],
      format: 'JSONEachRow',
    });
    const conversion = (id: string, link: string, n: number, iso: string, value: number) => ({
      workspace_id: workspaceId, link_id: link, ts: Date.parse(iso), conversion_id: id, click_id: `ck_${link}_${n}`, campaign_id: '', event: 'purchase',
      value, currency: 'EUR', order_id: '', attributed: true, source: 's2s',
    });
    await client.insert({
      table: 'conversions',
      values: [conversion('conv_1', a, 3, '2026-06-10T11:30:00Z', 10), conversion('conv_2', a, 2, '2026-06-10T13:30:00Z', 20)],
      format: 'JSONEachRow',
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  const get = async (path: string) => {
    const res = await api.request('GET', path, { key });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body.data;
  };
  const twoHours = 'from=2026-06-10T11:00:00Z&to=2026-06-10T13:00:00Z';

  it('the overview counts the hours from `from` up to `to`, by local hour, and compares with the hours just before', async () => {
    const data = await get(`/analytics?${twoHours}&granularity=hour&compare=previous`);
    // 11:15 (a, US) and 12:59:59.999 (b, DE); 13:00 is the end, not in the range.
    expect(data.summary).toEqual({ totalClicks: 2, uniqueClicks: 2, conversions: 1, revenue: 10, conversionRate: 50 });
    expect(data.timeSeries).toEqual([
      { date: '2026-06-10T11:00', clicks: 1, uniqueClicks: 1, conversions: 1 },
      { date: '2026-06-10T12:00', clicks: 1, uniqueClicks: 1, conversions: 0 },
    ]);
    expect(data.countries).toEqual([{ country: 'DE', clicks: 1 }, { country: 'US', clicks: 1 }]);
    expect(data.previous).toMatchObject({ from: '2026-06-10T09:00:00Z', to: '2026-06-10T11:00:00Z', summary: { totalClicks: 1, conversions: 0 } });
    expect(data.previous.timeSeries.map((p: { date: string; clicks: number }) => [p.date, p.clicks])).toEqual([['2026-06-10T09:00', 0], ['2026-06-10T10:00', 1]]);
    // Labelled in the report's zone: New York is 4 hours behind UTC in June.
    const newYork = await get(`/analytics?${twoHours}&granularity=hour&timezone=America/New_York`);
    expect(newYork.timeSeries.map((p: { date: string; clicks: number }) => [p.date, p.clicks])).toEqual([['2026-06-10T07:00', 1], ['2026-06-10T08:00', 1]]);
  });

  it('instants are rounded outwards to whole hours, and any offset names the same instants', async () => {
    const exact = await get(`/analytics?${twoHours}`);
    expect(await get('/analytics?from=2026-06-10T11:59:59Z&to=2026-06-10T12:00:01Z')).toEqual(exact);
    expect(await get('/analytics?from=2026-06-10T13:00:00%2B02:00&to=2026-06-10T10:30:00-02:30')).toEqual(exact);
    const experiments = await get(`/analytics/experiments/${a}?from=2026-06-10T11:20:00Z&to=2026-06-10T12:10:00Z`);
    expect([experiments.from, experiments.to]).toEqual(['2026-06-10T11:00:00Z', '2026-06-10T13:00:00Z']);
  });

  it('day buckets of a range of instants are the local days its hours fall on, the edge ones partial', async () => {
    const data = await get('/analytics?from=2026-06-09T22:00:00Z&to=2026-06-10T11:00:00Z&granularity=day');
    expect(data.timeSeries.map((p: { date: string; clicks: number }) => [p.date, p.clicks])).toEqual([['2026-06-09', 1], ['2026-06-10', 1]]);
    // In Berlin (UTC+2) the same hours are all on the 10th.
    const berlin = await get('/analytics?from=2026-06-09T22:00:00Z&to=2026-06-10T11:00:00Z&granularity=day&timezone=Europe/Berlin');
    expect(berlin.timeSeries.map((p: { date: string; clicks: number }) => [p.date, p.clicks])).toEqual([['2026-06-10', 2]]);
  });

  it('one link, breakdowns, experiments and the conversions report count the same hours', async () => {
    expect((await get(`/analytics/${a}?${twoHours}`)).summary).toEqual({ totalClicks: 1, uniqueClicks: 1, conversions: 1, revenue: 10, conversionRate: 100 });
    const countries = await get(`/analytics/breakdown?dimension=country&${twoHours}`);
    expect(countries.map((r: { value: string; clicks: number; conversions: number }) => [r.value, r.clicks, r.conversions])).toEqual([['US', 1, 1], ['DE', 1, 0]]);
    const experiments = await get(`/analytics/experiments/${a}?${twoHours}`);
    expect(experiments.variants.map((v: { variant: string; clicks: number; conversions: number }) => [v.variant, v.clicks, v.conversions])).toEqual([['default', 1, 1]]);
    const report = await get(`/analytics/conversions?${twoHours}`);
    expect(report.summary).toMatchObject({ totalConversions: 1, totalRevenue: 10, conversionRate: 50 });
    expect(report.conversions.map((c: { conversionId: string }) => c.conversionId)).toEqual(['conv_1']);
  });

  it('the click log takes instants as given, `to` exclusive, and mixes them with dates', async () => {
    const ids = async (qs: string) => ((await get(`/analytics/clicks?${qs}`)) as Array<{ clickId: string }>).map((c) => c.clickId).sort();
    expect(await ids('from=2026-06-10T11:15:00Z&to=2026-06-10T12:59:59.999Z')).toEqual([`ck_${a}_3`]);
    expect(await ids('from=2026-06-10T11:15:00.001Z&to=2026-06-10T13:00:00Z')).toEqual([`ck_${b}_1`]);
    expect(await ids('from=2026-06-10&to=2026-06-10T12:00:00Z')).toEqual([`ck_${a}_2`, `ck_${a}_3`]);
  });

  it('a CSV export of a range of instants is named without colons', async () => {
    const res = await api.request('GET', `/analytics/breakdown?dimension=country&format=csv&${twoHours}`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="breakdown-country-2026-06-10T110000Z-2026-06-10T130000Z.csv"');
  });

  it('bad instants and ranges are a 400 naming the parameter', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['/analytics?from=2026-06-10T11:00:00Z&to=2026-06-10', 'to', /instant/],
      ['/analytics?from=2026-06-10&to=2026-06-10T11:00:00Z', 'from', /instant/],
      ['/analytics?from=2026-06-10T13:00:00Z&to=2026-06-10T13:00:00Z', 'from', /before to/],
      ['/analytics?from=2026-06-10T13:00:00Z&to=2026-06-10T12:00:00Z', 'from', /before to/],
      ['/analytics?from=2026-06-10T11:00:00', 'from', /instant with its offset/],
      ['/analytics?from=2026-06-10T25:00:00Z', 'from', /./],
      ['/analytics?from=2026-06-10 11:00', 'from', /YYYY-MM-DD/],
      ['/analytics?from=2026-05-01T00:00:00Z&to=2026-06-02T00:00:00Z&granularity=hour', 'to', /at most 31 days/],
      ['/analytics/breakdown?dimension=country&from=2026-06-10T11:00:00Z&to=2026-06-10', 'to', /instant/],
      ['/analytics/clicks?from=2026-06-10T12:00:00Z&to=2026-06-10T12:00:00Z', 'from', /before to/],
      ['/analytics/clicks?from=2026-06-11&to=2026-06-10T12:00:00Z', 'from', /before to/],
    ];
    for (const [path, parameter, message] of cases) {
      const res = await api.request('GET', path, { key });
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('VALIDATION_ERROR');
      const detail = res.body.error.details.find((d: { path: string }) => d.path === parameter);
      expect(detail, `${path}: ${JSON.stringify(res.body.error.details)}`).toBeDefined();
      expect(detail.message, path).toMatch(message);
    }
  });
});

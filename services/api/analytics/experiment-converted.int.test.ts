import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { experimentReportSchema, type ExperimentReport } from '../../../shared/schemas/analytics.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';
import { compareWithControl } from './experiment-statistics.ts';

/**
 * The experiment report's successes: a variant's converted clicks are its clicks of the
 * range with a conversion also in the range. Clicks before the range whose conversions
 * fall in it, and conversions after the range's end, are no successes (they once made a
 * rate above 100 %). Hand-counted fixed past data: 2026-03-10 to 2026-03-12 is the range,
 * UTC unless a zone is named (New York is UTC-4 then: DST began on 2026-03-08).
 */
describe('experiment converted clicks', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let key: string;
  let linkId: string;
  let ruleA: string;
  let ruleB: string;
  let ruleC: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    const tenant = await api.tenant();
    key = tenant.key;
    const campaignId = (await api.request('POST', '/campaigns', { key, body: { name: 'Test' } })).body.data.id;
    linkId = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example/', campaignId } })).body.data.id;
    const rule = async (name: string) =>
      (await api.request('POST', '/rules', { key, body: { campaignId, linkId, name, type: 'percentage', conditions: { percentage: 30 }, destinationUrl: `https://shop.example/${name}` } })).body.data.id as string;
    ruleA = await rule('A');
    ruleB = await rule('B');
    ruleC = await rule('C');

    let n = 0;
    const clicks: Record<string, unknown>[] = [];
    const conversions: Record<string, unknown>[] = [];
    /** A click of `rule` ('' = default) at `at`, converting at each of `convertsAt` (an order each). */
    const click = (rule: string, at: string, convertsAt: string[] = [], over: { bot?: boolean; country?: string } = {}) => {
      const id = `ck_exp_${n++}`;
      clicks.push({
        workspace_id: tenant.workspaceId, link_id: linkId, ts: Date.parse(at), click_id: id, kind: 'click', campaign_id: campaignId, visitor_id: `v${n}`,
        country: over.country ?? 'DE', device_class: 'mobile', os: '', browser: '', referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '',
        utm_term: '', utm_content: '', source: 'link', rule_id: rule, destination: '', bot: over.bot ?? false,
      });
      for (const [i, ts] of convertsAt.entries()) {
        conversions.push({
          workspace_id: tenant.workspaceId, link_id: linkId, ts: Date.parse(ts), conversion_id: `conv_${id}_${i}`, click_id: id, campaign_id: campaignId,
          event: 'purchase', value: 10, currency: 'EUR', order_id: `o_${id}_${i}`, attributed: true, source: 's2s',
        });
      }
    };
    // Variant A.
    for (let i = 0; i < 4; i++) click(ruleA, '2026-03-08T12:00:00Z', ['2026-03-10T09:00:00Z']); // before the range, converted in it
    click(ruleA, '2026-03-10T10:00:00Z', ['2026-03-10T11:00:00Z']); // in, converted in
    click(ruleA, '2026-03-10T10:30:00Z', ['2026-03-10T11:00:00Z', '2026-03-11T11:00:00Z']); // in, converted twice in: one success
    click(ruleA, '2026-03-11T08:00:00Z', ['2026-03-11T09:00:00Z'], { country: 'US' }); // in, converted in, another country
    click(ruleA, '2026-03-12T20:00:00Z', ['2026-03-13T02:00:00Z']); // in, converted after `to` (UTC); both in New York's range
    click(ruleA, '2026-03-11T12:00:00Z', ['2026-03-11T13:00:00Z'], { bot: true }); // a bot's, in and converted in
    click(ruleA, '2026-03-12T09:00:00Z'); // in, never converted
    // Default.
    click('', '2026-03-09T23:59:59Z', ['2026-03-10T00:00:00Z']); // a second before the range, converted at its start
    click('', '2026-03-12T23:59:59Z', ['2026-03-13T00:00:00Z']); // its last second, converted at its end
    click('', '2026-03-10T12:00:00Z', ['2026-03-12T12:00:00Z']);
    click('', '2026-03-10T13:00:00Z');
    click('', '2026-03-11T13:00:00Z');
    // Variant B: only clicks before the range, converted in it.
    click(ruleB, '2026-03-09T10:00:00Z', ['2026-03-10T10:00:00Z']);
    click(ruleB, '2026-03-12T10:00:00Z');
    // Variant C: a click before the range only, converted in it: no variant of the range.
    click(ruleC, '2026-03-05T10:00:00Z', ['2026-03-10T12:00:00Z']);
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
    await client.insert({ table: 'conversions', values: conversions, format: 'JSONEachRow' });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  const report = async (qs: string): Promise<ExperimentReport> => {
    const res = await api.request('GET', `/analytics/experiments/${linkId}?${qs}`, { key });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    return experimentReportSchema.parse(res.body.data);
  };
  /** variant -> [clicks, conversions, convertedClicks, conversionRate]; and the invariant every row keeps. */
  const figures = (r: ExperimentReport) => {
    for (const v of r.variants) {
      expect(v.convertedClicks, v.variant).toBeLessThanOrEqual(v.clicks);
      expect(v.conversionRate, v.variant).toBeLessThanOrEqual(100);
    }
    return Object.fromEntries(r.variants.map((v) => [v.variant, [v.clicks, v.conversions, v.convertedClicks, v.conversionRate]]));
  };

  it('counts only the range\'s clicks converted within the range; conversions stay every conversion of the range', async () => {
    const r = await report('from=2026-03-10&to=2026-03-12');
    expect(figures(r)).toEqual({
      // 5 clicks (not the bot's); 4 + 1 + 2 + 1 + 1 (the bot's) conversions in range; 3 successes.
      [ruleA]: [5, 9, 3, 60],
      // 4 clicks; the conversion at 00:00 of the 10th (its click a second before) and the 12th's; 1 success.
      default: [4, 2, 1, 25],
      [ruleB]: [1, 1, 0, 0],
    });
    // The statistics get those counts, none clamped.
    const a = r.variants.find((v) => v.variant === ruleA)!;
    expect(a.comparison).toEqual(compareWithControl({ clicks: 5, conversions: 3 }, { clicks: 4, conversions: 1 }));
  });

  it('the same clicks as `clicks` counts: bots with includeBots, the filters, the zone\'s days', async () => {
    expect(figures(await report('from=2026-03-10&to=2026-03-12&includeBots=true'))[ruleA]).toEqual([6, 9, 4, 66.67]);
    // Only the A click from the US converts among US clicks; conversions follow the filter too.
    expect(figures(await report('from=2026-03-10&to=2026-03-12&country=US'))).toEqual({ [ruleA]: [1, 1, 1, 100] });
    // New York's 10th-12th is 04:00Z on the 10th to 04:00Z on the 13th: A's conversion at 02:00Z on the 13th
    // is in, with its click, and so is the default's at 00:00Z on the 13th; the default's click at 23:59:59Z
    // on the 9th is out, and its conversion at 00:00Z on the 10th too.
    expect(figures(await report('from=2026-03-10&to=2026-03-12&timezone=America/New_York'))).toEqual({
      [ruleA]: [5, 10, 4, 80],
      default: [4, 2, 2, 50],
      [ruleB]: [1, 1, 0, 0],
    });
  });

  it('a range beginning when the experiment did counts every conversion of its clicks up to its end', async () => {
    expect(figures(await report('from=2026-03-01&to=2026-03-20'))).toEqual({
      // Every click but the bot's, every conversion; every converted click but the bot's.
      [ruleA]: [9, 10, 8, 88.89],
      default: [5, 3, 3, 60],
      [ruleB]: [2, 1, 1, 50],
      [ruleC]: [1, 1, 1, 100],
    });
    // Instants: the UTC days' range, as dates give it.
    expect(figures(await report(`from=${encodeURIComponent('2026-03-10T00:00:00Z')}&to=${encodeURIComponent('2026-03-13T00:00:00Z')}`))).toEqual(
      figures(await report('from=2026-03-10&to=2026-03-12')),
    );
  });

  it('lists only the variants that decided clicks of the link in the range; one that did not is still a control, an empty arm', async () => {
    // C's only click is before the range; its conversion in the range made it a row of
    // the rule breakdown, listed here with 0 clicks, and choosable as the control of the rest.
    expect(Object.keys(figures(await report('from=2026-03-10&to=2026-03-12'))).sort()).toEqual([ruleA, ruleB, 'default'].sort());
    const withC = await report(`from=2026-03-10&to=2026-03-12&control=${ruleC}`);
    expect(withC.variants.map((v) => [v.variant, v.isControl]).sort()).toEqual([[ruleA, false], [ruleB, false], ['default', false]].sort());
    const a = withC.variants.find((v) => v.variant === ruleA)!;
    expect(a.comparison).toEqual(compareWithControl({ clicks: 5, conversions: 3 }, { clicks: 0, conversions: 0 }));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { analyticsOverviewSchema, breakdownRowSchema, experimentReportSchema, realtimeSchema } from '../../../shared/schemas/analytics.ts';
import { mulberry32 } from '../../../shared/testing/seeded-random.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';
import { compareWithControl, MINIMUM_SAMPLE } from './experiment-statistics.ts';

/**
 * Breakdowns by every dimension, filters on every analytics endpoint, compare,
 * realtime, experiments and CSV, against a reference computed here in plain
 * TypeScript from independently generated clicks and conversions (no code shared
 * with the queries). Fixed past dates, so the answers hold at any hour.
 */

interface Click {
  workspace_id: string; link_id: string; ts: number; click_id: string; kind: 'click' | 'impression'; campaign_id: string; visitor_id: string;
  country: string; region: string; city: string; device_class: string; os: string; browser: string; referrer_host: string; utm_source: string; utm_medium: string;
  utm_campaign: string; utm_term: string; utm_content: string; source: string; rule_id: string; destination: string; bot: boolean;
}
interface Conversion { workspace_id: string; link_id: string; ts: number; conversion_id: string; click_id: string; campaign_id: string; event: string; value: number; currency: string; order_id: string; attributed: boolean; source: string }

/** Dimension -> the click's value ('' = none), as the API names the dimensions. */
const valueOf: Record<string, (c: Click) => string> = {
  country: (c) => c.country, region: (c) => c.region, city: (c) => c.city, device: (c) => c.device_class, os: (c) => c.os, browser: (c) => c.browser, referrer: (c) => c.referrer_host,
  utm_source: (c) => c.utm_source, utm_medium: (c) => c.utm_medium, utm_campaign: (c) => c.utm_campaign, utm_term: (c) => c.utm_term,
  utm_content: (c) => c.utm_content, source: (c) => c.source, link: (c) => c.link_id, campaign: (c) => c.campaign_id,
  rule: (c) => c.rule_id || 'default', destination: (c) => c.destination,
};
const dims = Object.keys(valueOf);

const FROM = '2026-05-01';
const TO = '2026-05-10';
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('analytics by dimension', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let b: { key: string; workspaceId: string };
  let campaigns: { id: string; name: string }[] = [];
  let links: { id: string; shortCode: string; campaignId: string }[] = [];
  let rules: { id: string; name: string; type: string }[] = [];
  const clicks: Click[] = [];
  const conversions: Conversion[] = [];

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    a = await api.tenant();
    b = await api.tenant();
    for (const name of ['Spring', 'Autumn']) campaigns.push((await api.request('POST', '/campaigns', { key: a.key, body: { name } })).body.data);
    for (let i = 0; i < 5; i++) {
      links.push((await api.request('POST', '/links', { key: a.key, body: { destinationUrl: `https://example.com/${i}`, campaignId: campaigns[i % 2]!.id } })).body.data);
    }
    for (const [name, percentage] of [['Variant A', 40], ['Variant B', 30]] as const) {
      const body = { campaignId: links[0]!.campaignId, linkId: links[0]!.id, name, type: 'percentage', conditions: { percentage }, destinationUrl: `https://example.com/${name.at(-1)}` };
      rules.push((await api.request('POST', '/rules', { key: a.key, body })).body.data);
    }
    const linkB = (await api.request('POST', '/links', { key: b.key, body: { destinationUrl: 'https://example.org/' } })).body.data;

    const rand = mulberry32(16);
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const lo = Date.parse('2026-04-20T00:00:00Z');
    const hi = Date.parse('2026-05-12T00:00:00Z');
    const make = (n: number, workspaceId: string, link: { id: string; campaignId: string }): Click => {
      const bot = rand() < 0.08;
      const rule = link.id === links[0]!.id ? pick([rules[0]!.id, rules[1]!.id, '', '', 'rule_deleted1']) : pick(['', '', rules[0]!.id]);
      return {
        workspace_id: workspaceId, link_id: link.id, ts: lo + Math.floor(rand() * (hi - lo)), click_id: `ck_dim_${n}`,
        kind: rand() < 0.1 ? 'impression' : 'click', campaign_id: link.campaignId, visitor_id: bot ? 'bot' : `v${Math.floor(rand() * 50)}`,
        country: pick(['US', 'DE', 'DE', 'AT', '']), region: pick(['Bavaria', 'Texas', '']), city: pick(['Munich', 'Austin', 'Vienna', '']), device_class: pick(['mobile', 'desktop', 'tablet']), os: pick(['ios', 'android', 'windows', 'chromeos', 'other', '']),
        browser: pick(['Chrome', 'Safari', '']), referrer_host: pick(['news.example.com', 't.co', '', 'com.my_app.client', '[2001:db8::1]']), utm_source: pick(['newsletter', 'ads', '']),
        utm_medium: pick(['email', '']), utm_campaign: pick(['spring', '']), utm_term: pick(['shoes', '', 'spring\tsale']), utm_content: pick(['hero', 'footer', '']),
        source: pick(['link', 'link', 'qr']), rule_id: rule, // No destination: a link whose redirectBehavior is `never` answers 204.
        destination: rule ? `https://example.com/${rule}` : pick(['https://example.com/default', 'https://example.com/default', '']), bot,
      };
    };
    for (let n = 0; n < 2500; n++) clicks.push(make(n, a.workspaceId, links[Math.floor(rand() * rand() * links.length)]!));
    // Workspace B: its own link, and rows that reuse A's link ids; none may ever count for A.
    for (let n = 2500; n < 2800; n++) clicks.push(make(n, b.workspaceId, n % 2 ? linkB : links[n % links.length]!));
    // A deleted rule of A that decided only bots' clicks: in reports with includeBots alone.
    for (let n = 2800; n < 2803; n++) {
      clicks.push({ ...make(n, a.workspaceId, links[0]!), kind: 'click', bot: true, visitor_id: 'bot', rule_id: 'rule_botsonly1', destination: 'https://example.com/rule_botsonly1' });
    }
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });

    // Conversions of some clicks, minutes to days after them (so some fall in the range while
    // their click did not); one order fired twice; some clicks with a second order of their own
    // (each counts: a click may convert more than once); some unattributed; one whose click was never stored.
    let m = 0;
    for (const c of clicks) {
      if (c.kind !== 'click' || rand() > 0.12) continue;
      const ts = c.ts + Math.floor(rand() * 3 * 86_400_000);
      const conv = { workspace_id: c.workspace_id, link_id: c.link_id, ts, conversion_id: `conv_dim_${m}`, click_id: c.click_id, campaign_id: c.campaign_id, event: 'purchase', value: 1 + (m % 7) * 2.5, currency: 'EUR', order_id: `o${m}`, attributed: rand() > 0.05, source: 's2s' };
      conversions.push(conv);
      if (m % 25 === 0) conversions.push({ ...conv, conversion_id: `conv_dim_${m}_again`, ts: ts + 5000, source: 'pixel' });
      if (m % 10 === 3) conversions.push({ ...conv, conversion_id: `conv_dim_${m}_upsell`, ts: ts + 60_000, event: 'upsell', value: 4, order_id: `o${m}_upsell` });
      m++;
    }
    conversions.push({ workspace_id: a.workspaceId, link_id: links[1]!.id, ts: Date.parse('2026-05-05T12:00:00Z'), conversion_id: 'conv_dim_lost', click_id: 'ck_never_stored', campaign_id: links[1]!.campaignId, event: 'purchase', value: 99, currency: 'EUR', order_id: 'lost', attributed: true, source: 's2s' });
    await client.insert({ table: 'conversions', values: conversions, format: 'JSONEachRow' });
  }, 180_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  // ---- the reference ----

  type Filter = Record<string, string[]>;
  const matches = (c: Click, filter: Filter) => Object.entries(filter).every(([d, vs]) => vs.map((v) => (v === '(none)' ? '' : v)).includes(valueOf[d]!(c)));
  /** The calendar day of an instant in a zone (UTC unless given), via ICU. */
  const localDay = (ms: number, tz?: string) => (tz ? new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms) : day(ms));
  const inRange = (ms: number, from: string, to: string, tz?: string) => localDay(ms, tz) >= from && localDay(ms, tz) <= to;
  const clicksOf = (opts: { workspaceId?: string; from?: string; to?: string; tz?: string; filter?: Filter; includeBots?: boolean; campaignId?: string; linkId?: string } = {}) =>
    clicks.filter((c) => c.workspace_id === (opts.workspaceId ?? a.workspaceId) && c.kind === 'click' && (opts.includeBots || !c.bot) && inRange(c.ts, opts.from ?? FROM, opts.to ?? TO, opts.tz) &&
      matches(c, opts.filter ?? {}) && (opts.campaignId === undefined || c.campaign_id === opts.campaignId) && (opts.linkId === undefined || c.link_id === opts.linkId));
  /** Attributed, each order once (its first), in the range, whose stored click passes the filter. */
  const conversionsOf = (opts: { from?: string; to?: string; tz?: string; filter?: Filter; campaignId?: string; linkId?: string } = {}) => {
    const byClick = new Map(clicks.filter((c) => c.workspace_id === a.workspaceId && c.kind === 'click').map((c) => [c.click_id, c]));
    const seen = new Set<string>();
    return conversions
      .filter((v) => v.workspace_id === a.workspaceId && v.attributed && inRange(v.ts, opts.from ?? FROM, opts.to ?? TO, opts.tz))
      .filter((v) => (opts.campaignId === undefined || v.campaign_id === opts.campaignId) && (opts.linkId === undefined || v.link_id === opts.linkId))
      .sort((x, y) => x.ts - y.ts || (x.conversion_id < y.conversion_id ? -1 : 1))
      .filter((v) => (seen.has(v.order_id) ? false : (seen.add(v.order_id), true)))
      .filter((v) => opts.filter === undefined || Object.keys(opts.filter).length === 0 || (byClick.has(v.click_id) && matches(byClick.get(v.click_id)!, opts.filter)))
      .map((v) => ({ ...v, click: byClick.get(v.click_id) }));
  };
  const rate = (conv: number, n: number) => (n === 0 ? 0 : Math.round((conv / n) * 10_000) / 100);
  const money = (xs: number[]) => Math.round(xs.reduce((s, x) => s + x, 0) * 10_000) / 10_000;

  function expectedBreakdown(dimension: string, opts: Parameters<typeof clicksOf>[0] & { filter?: Filter } = {}) {
    const rows = new Map<string, { clicks: number; visitors: Set<string>; conversions: number; revenue: number[] }>();
    const row = (v: string) => rows.get(v) ?? rows.set(v, { clicks: 0, visitors: new Set(), conversions: 0, revenue: [] }).get(v)!;
    for (const c of clicksOf(opts)) {
      const r = row(valueOf[dimension]!(c));
      r.clicks++;
      r.visitors.add(c.visitor_id);
    }
    for (const v of conversionsOf({ ...opts, filter: opts.filter ?? {} })) {
      if (!v.click) continue;
      const r = row(valueOf[dimension]!(v.click));
      r.conversions++;
      r.revenue.push(v.value);
    }
    return [...rows]
      .map(([value, r]) => ({ value: value === '' ? null : value, clicks: r.clicks, uniqueClicks: r.visitors.size, conversions: r.conversions, revenue: money(r.revenue), conversionRate: rate(r.conversions, r.clicks) }))
      .sort((x, y) => y.clicks - x.clicks || y.conversions - x.conversions || ((x.value ?? '') < (y.value ?? '') ? -1 : 1));
  }

  /** Per value, the clicks of the range (those clicksOf counts) that converted at least once in the range (the experiments' successes). */
  function convertedClicks(dimension: string, opts: Parameters<typeof clicksOf>[0] = {}) {
    const ofRange = new Set(clicksOf(opts).map((c) => c.click_id));
    const byValue = new Map<string | null, Set<string>>();
    for (const v of conversionsOf({ ...opts, filter: {} })) {
      if (!v.click || !ofRange.has(v.click.click_id)) continue;
      const value = valueOf[dimension]!(v.click) || null;
      (byValue.get(value) ?? byValue.set(value, new Set()).get(value)!).add(v.click.click_id);
    }
    return new Map([...byValue].map(([value, clicks]) => [value, clicks.size]));
  }

  const get = async (path: string, key = a.key) => {
    const res = await api.request('GET', path, { key });
    expect(res.status, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    return res.body;
  };
  /** Each test sends tens of requests; on a shared 2-core machine that takes minutes, not the default 30 s. */
  const HEAVY = 180_000;
  const figures = (rows: any[]) => rows.map(({ value, clicks, uniqueClicks, conversions, revenue, conversionRate }) => ({ value, clicks, uniqueClicks, conversions, revenue, conversionRate }));

  it('breaks down by every dimension: clicks, exact uniques, conversions and revenue under the value of their click', async () => {
    for (const dimension of dims) {
      const body = await get(`/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}&limit=1000`);
      const want = expectedBreakdown(dimension);
      expect(figures(body.data), dimension).toEqual(want);
      expect(body.pagination, dimension).toEqual({ page: 1, limit: 1000, total: want.length, totalPages: 1 });
      for (const r of body.data) breakdownRowSchema.parse(r);
    }
    // Some conversions fall in the range while their click came before it: a value may then have conversions without clicks.
    expect(conversionsOf().some((v) => v.click && day(v.click.ts) < FROM)).toBe(true);
  }, HEAVY);

  it('in other zones: whole UTC days from the daily rollup, the hours at the edges from the clicks, exact either way', async () => {
    // Each local day straddles two UTC days: New York is UTC-4 in May, Tokyo UTC+9.
    for (const tz of ['America/New_York', 'Asia/Tokyo']) {
      for (const dimension of ['country', 'city', 'link', 'rule', 'utm_content']) {
        const body = await get(`/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}&limit=1000&timezone=${encodeURIComponent(tz)}`);
        const want = expectedBreakdown(dimension, { tz });
        expect(figures(body.data), `${tz} ${dimension}`).toEqual(want);
        expect(body.pagination.total, `${tz} ${dimension}`).toBe(want.length);
      }
    }
    // The edges matter: a day earlier or later would count other clicks.
    expect(clicksOf({ tz: 'America/New_York' }).length).not.toBe(clicksOf().length);
  }, HEAVY);

  it('labels: (none), short codes, campaign names, rule names and types, the default row, country and OS names', async () => {
    const ref = (await get(`/analytics/breakdown?dimension=referrer&from=${FROM}&to=${TO}`)).data;
    expect(ref.find((r: any) => r.value === null)).toMatchObject({ label: '(none)' });
    const byLink = (await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`)).data;
    for (const r of byLink) expect(r.shortCode).toBe(links.find((l) => l.id === r.value)!.shortCode);
    const byCampaign = (await get(`/analytics/breakdown?dimension=campaign&from=${FROM}&to=${TO}`)).data;
    expect(byCampaign.map((r: any) => r.label).sort()).toEqual(['Autumn', 'Spring']);
    const byRule = (await get(`/analytics/breakdown?dimension=rule&from=${FROM}&to=${TO}`)).data;
    expect(byRule.find((r: any) => r.value === 'default')).toMatchObject({ label: 'Default destination', name: null, type: null });
    expect(byRule.find((r: any) => r.value === rules[0]!.id)).toMatchObject({ label: 'Variant A', name: 'Variant A', type: 'percentage' });
    expect(byRule.find((r: any) => r.value === 'rule_deleted1')).toMatchObject({ name: null, type: null });
    const byCountry = (await get(`/analytics/breakdown?dimension=country&from=${FROM}&to=${TO}`)).data;
    expect(byCountry.find((r: any) => r.value === 'AT')).toMatchObject({ label: 'Austria' });
    const byOs = (await get(`/analytics/breakdown?dimension=os&from=${FROM}&to=${TO}`)).data;
    expect(Object.fromEntries(byOs.map((r: any) => [r.value, r.label]))).toEqual({
      ios: 'iOS', android: 'Android', windows: 'Windows', chromeos: 'ChromeOS', other: 'Other', null: '(none)',
    });
  }, HEAVY);

  it('limit and pages cut the sorted rows; bots only with includeBots', async () => {
    const all = expectedBreakdown('utm_content', { includeBots: true });
    const page2 = await get(`/analytics/breakdown?dimension=utm_content&from=${FROM}&to=${TO}&limit=1&page=2&includeBots=true`);
    expect(figures(page2.data)).toEqual(all.slice(1, 2));
    expect(page2.pagination).toEqual({ page: 2, limit: 1, total: all.length, totalPages: all.length });
    const past = await get(`/analytics/breakdown?dimension=utm_content&from=${FROM}&to=${TO}&limit=5&page=9`);
    expect(past.data).toEqual([]);
    expect(past.pagination.total).toBe(expectedBreakdown('utm_content').length);
    expect(clicksOf({ includeBots: true }).length).toBeGreaterThan(clicksOf().length);
    // Days after the last click: every row is a value with conversions only. A page past the
    // end reports the same total as the first page, and the reference's.
    for (const dimension of ['utm_content', 'link', 'city']) {
      const want = expectedBreakdown(dimension, { from: '2026-05-12', to: '2026-05-14' });
      expect(want.length, dimension).toBeGreaterThan(1);
      expect(want.every((r) => r.clicks === 0 && r.conversions > 0), dimension).toBe(true);
      const first = await get(`/analytics/breakdown?dimension=${dimension}&from=2026-05-12&to=2026-05-14&limit=1`);
      expect(figures(first.data), dimension).toEqual(want.slice(0, 1));
      const beyond = await get(`/analytics/breakdown?dimension=${dimension}&from=2026-05-12&to=2026-05-14&limit=1&page=99`);
      expect(beyond.data, dimension).toEqual([]);
      expect([first.pagination.total, beyond.pagination.total], dimension).toEqual([want.length, want.length]);
    }
  }, HEAVY);

  const combos: Array<[string, Filter]> = [
    ['country=DE,AT', { country: ['DE', 'AT'] }],
    ['country=de&os=ios', { country: ['DE'], os: ['ios'] }],
    ['os=ChromeOS,other', { os: ['chromeos', 'other'] }],
    ['city=Munich,(none)&region=Bavaria', { city: ['Munich', '(none)'], region: ['Bavaria'] }],
    ['utm_source=newsletter&device=mobile,tablet&source=qr', { utm_source: ['newsletter'], device: ['mobile', 'tablet'], source: ['qr'] }],
    ['referrer=(none)&browser=Chrome', { referrer: ['(none)'], browser: ['Chrome'] }],
    ['rule=default', { rule: ['default'] }],
    ['source=qr', { source: ['qr'] }],
    // A repeated parameter is its values comma-joined: OR, as Dub's clients send arrays.
    ['country=DE&country=at', { country: ['DE', 'AT'] }],
    ['city=Munich&region=Bavaria&city=(none)', { city: ['Munich', '(none)'], region: ['Bavaria'] }],
  ];

  it('filters combine on the breakdown: OR within a dimension, AND across', async () => {
    for (const [qs, filter] of combos) {
      for (const dimension of ['country', 'browser', 'link']) {
        const body = await get(`/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}&limit=1000&${qs}`);
        expect(figures(body.data), `${dimension} ${qs}`).toEqual(expectedBreakdown(dimension, { filter }));
      }
    }
    const campaign = campaigns[0]!.id;
    const body = await get(`/analytics/breakdown?dimension=os&from=${FROM}&to=${TO}&campaignId=${campaign}&country=DE`);
    expect(figures(body.data)).toEqual(expectedBreakdown('os', { campaignId: campaign, filter: { country: ['DE'] } }).slice(0, 10));
  }, HEAVY);

  it('filters apply to the overview, one link, the click log and the conversions report', async () => {
    for (const [qs, filter] of combos) {
      const data = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&${qs}`)).data);
      const rows = clicksOf({ filter });
      const conv = conversionsOf({ filter });
      expect(data.summary, qs).toEqual({ totalClicks: rows.length, uniqueClicks: new Set(rows.map((r) => r.visitor_id)).size, conversions: conv.length, revenue: money(conv.map((v) => v.value)), conversionRate: rate(conv.length, rows.length) });
      expect(data.timeSeries.map((p) => p.clicks), qs).toEqual(Array.from({ length: 10 }, (_, i) => rows.filter((r) => day(r.ts) === `2026-05-${String(i + 1).padStart(2, '0')}`).length));
      const perLink = new Map<string, number>();
      for (const r of rows) perLink.set(r.link_id, (perLink.get(r.link_id) ?? 0) + 1);
      expect(data.topLinks.map((t) => [t.linkId, t.clicks]), qs).toEqual([...perLink].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)));

      const link = links[0]!;
      const one = analyticsOverviewSchema.parse((await get(`/analytics/${link.id}?from=${FROM}&to=${TO}&${qs}`)).data);
      const linkRows = clicksOf({ filter, linkId: link.id });
      expect(one.summary.totalClicks, qs).toBe(linkRows.length);
      expect(one.summary.uniqueClicks, qs).toBe(new Set(linkRows.map((r) => r.visitor_id)).size);
      expect(one.summary.conversions, qs).toBe(conversionsOf({ filter, linkId: link.id }).length);

      const log = await get(`/analytics/clicks?from=${FROM}&to=${TO}&limit=100&${qs}`);
      expect(log.pagination.total, qs).toBe(rows.length);
      const newest = [...rows].sort((x, y) => y.ts - x.ts || (x.click_id < y.click_id ? 1 : -1)).slice(0, 100);
      expect(log.data.map((c: any) => c.clickId), qs).toEqual(newest.map((r) => r.click_id));

      const report = (await get(`/analytics/conversions?from=${FROM}&to=${TO}&limit=100&${qs}`)).data;
      expect(report.summary.totalConversions, qs).toBe(conv.length);
      expect(report.summary.conversionRate, qs).toBe(rate(conv.length, rows.length));
    }
    // The log filtered by destination (in clicks_by_time since 0012).
    const dest = `https://example.com/${rules[1]!.id}`;
    const log = await get(`/analytics/clicks?from=${FROM}&to=${TO}&limit=5&destination=${encodeURIComponent(dest)}`);
    expect(log.pagination.total).toBe(clicksOf({ filter: { destination: [dest] } }).length);
  }, HEAVY);

  it('compare=previous adds the period of the same length just before, filters included', async () => {
    for (const qs of ['', '&country=DE', `&linkId=${links[0]!.id}`]) {
      const data = analyticsOverviewSchema.parse((await get(`/analytics?from=2026-05-06&to=2026-05-10&compare=previous${qs}`)).data);
      const filter: Filter = qs === '&country=DE' ? { country: ['DE'] } : {};
      const linkId = qs.startsWith('&linkId') ? links[0]!.id : undefined;
      const before = clicksOf({ from: '2026-05-01', to: '2026-05-05', filter, ...(linkId ? { linkId } : {}) });
      const conv = conversionsOf({ from: '2026-05-01', to: '2026-05-05', filter, ...(linkId ? { linkId } : {}) });
      expect(data.previous!.from).toBe('2026-05-01');
      expect(data.previous!.to).toBe('2026-05-05');
      expect(data.previous!.summary, qs).toEqual({ totalClicks: before.length, uniqueClicks: new Set(before.map((r) => r.visitor_id)).size, conversions: conv.length, revenue: money(conv.map((v) => v.value)), conversionRate: rate(conv.length, before.length) });
      expect(data.previous!.timeSeries.map((p) => p.date)).toEqual(['2026-05-01', '2026-05-02', '2026-05-03', '2026-05-04', '2026-05-05']);
      expect(data.previous!.timeSeries.map((p) => p.clicks)).toEqual(['01', '02', '03', '04', '05'].map((d) => before.filter((r) => day(r.ts) === `2026-05-${d}`).length));
      // The current period is unchanged by the comparison.
      const { previous: _p, ...alone } = data;
      expect(analyticsOverviewSchema.parse((await get(`/analytics?from=2026-05-06&to=2026-05-10${qs}`)).data)).toEqual(alone);
    }
  }, HEAVY);

  it('compare=previous on /analytics/{linkId}: the link\'s previous period, exact uniques and conversions per day', async () => {
    const link = links[0]!;
    for (const [qs, filter] of [['', {}], ['&os=ios,android', { os: ['ios', 'android'] }]] as Array<[string, Filter]>) {
      const data = analyticsOverviewSchema.parse((await get(`/analytics/${link.id}?from=2026-05-04&to=2026-05-10&compare=previous${qs}`)).data);
      expect(data.previous, qs).toBeDefined();
      expect([data.previous!.from, data.previous!.to]).toEqual(['2026-04-27', '2026-05-03']);
      const before = clicksOf({ from: '2026-04-27', to: '2026-05-03', filter, linkId: link.id });
      const conv = conversionsOf({ from: '2026-04-27', to: '2026-05-03', filter, linkId: link.id });
      expect(data.previous!.summary, qs).toEqual({ totalClicks: before.length, uniqueClicks: new Set(before.map((r) => r.visitor_id)).size, conversions: conv.length, revenue: money(conv.map((v) => v.value)), conversionRate: rate(conv.length, before.length) });
      const days = ['2026-04-27', '2026-04-28', '2026-04-29', '2026-04-30', '2026-05-01', '2026-05-02', '2026-05-03'];
      expect(data.previous!.timeSeries, qs).toEqual(days.map((d) => {
        const inDay = before.filter((r) => day(r.ts) === d);
        return { date: d, clicks: inDay.length, uniqueClicks: new Set(inDay.map((r) => r.visitor_id)).size, conversions: conv.filter((v) => day(v.ts) === d).length };
      }));
      expect(before.length, qs).toBeGreaterThan(20);
      const { previous: _p, ...alone } = data;
      expect(analyticsOverviewSchema.parse((await get(`/analytics/${link.id}?from=2026-05-04&to=2026-05-10${qs}`)).data), qs).toEqual(alone);
    }
  }, HEAVY);

  it('filters on the other dimensions (utm_medium, utm_term, utm_campaign, utm_content, campaign, link, destination), exact', async () => {
    const dest = `https://example.com/${rules[0]!.id}`;
    const cases: Array<[string, Filter]> = [
      ['utm_medium=email&utm_term=shoes', { utm_medium: ['email'], utm_term: ['shoes'] }],
      ['utm_campaign=spring&utm_content=hero,(none)', { utm_campaign: ['spring'], utm_content: ['hero', '(none)'] }],
      ['utm_medium=(none)&utm_campaign=(none)', { utm_medium: ['(none)'], utm_campaign: ['(none)'] }],
      [`campaign=${campaigns[0]!.id}&device=mobile`, { campaign: [campaigns[0]!.id], device: ['mobile'] }],
      [`link=${links[0]!.id},${links[3]!.id}&utm_source=ads`, { link: [links[0]!.id, links[3]!.id], utm_source: ['ads'] }],
      [`destination=${encodeURIComponent(dest)},${encodeURIComponent('https://example.com/default')}&country=DE`, { destination: [dest, 'https://example.com/default'], country: ['DE'] }],
      // Each value as its breakdown row has it: a click sent nowhere, hosts URL parsing leaves, a tab a visitor sent.
      ['destination=(none)&country=DE', { destination: ['(none)'], country: ['DE'] }],
      [`referrer=com.my_app.client,${encodeURIComponent('[2001:db8::1]')}`, { referrer: ['com.my_app.client', '[2001:db8::1]'] }],
      [`utm_term=${encodeURIComponent('spring\tsale')}`, { utm_term: ['spring\tsale'] }],
    ];
    for (const [qs, filter] of cases) {
      const rows = clicksOf({ filter });
      const conv = conversionsOf({ filter });
      expect(rows.length, qs).toBeGreaterThan(10);
      for (const dimension of ['browser', 'link']) {
        const body = await get(`/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}&limit=1000&${qs}`);
        expect(figures(body.data), `${dimension} ${qs}`).toEqual(expectedBreakdown(dimension, { filter }));
      }
      const data = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&${qs}`)).data);
      expect(data.summary, qs).toEqual({ totalClicks: rows.length, uniqueClicks: new Set(rows.map((r) => r.visitor_id)).size, conversions: conv.length, revenue: money(conv.map((v) => v.value)), conversionRate: rate(conv.length, rows.length) });
      expect((await get(`/analytics/clicks?from=${FROM}&to=${TO}&limit=1&${qs}`)).pagination.total, qs).toBe(rows.length);
      expect((await get(`/analytics/conversions?from=${FROM}&to=${TO}&limit=1&${qs}`)).data.summary.totalConversions, qs).toBe(conv.length);
    }
  }, HEAVY);

  it('CSV of a breakdown, the click log and the conversions, parsed back, equals the JSON', async () => {
    for (const dimension of ['link', 'rule', 'referrer']) {
      const path = `/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}&limit=1000`;
      const json = (await get(path)).data;
      const res = await fetch(`${api.url}${path}&format=csv`, { headers: { authorization: `Bearer ${a.key}` } });
      expect(res.headers.get('content-type')).toContain('text/csv');
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="breakdown-/);
      const rows = parse(await res.text(), { columns: true }) as Record<string, string>[];
      expect(rows.map((r) => ({ ...r, value: r.value || null, clicks: +r.clicks!, uniqueClicks: +r.uniqueClicks!, conversions: +r.conversions!, revenue: +r.revenue!, conversionRate: +r.conversionRate!, ...('name' in r ? { name: r.name || null, type: r.type || null } : {}), ...('deleted' in r ? { deleted: r.deleted === '' ? undefined : r.deleted === 'true' } : {}), ...('domain' in r ? { domain: r.domain || undefined } : {}) })), dimension)
        .toEqual(json.map((r: any) => ({ ...r, label: r.label ?? '' })));
    }
    const log = await fetch(`${api.url}/analytics/clicks?from=${FROM}&to=${TO}&country=DE`, { headers: { authorization: `Bearer ${a.key}`, accept: 'text/csv' } });
    const logRows = parse(await log.text(), { columns: true }) as Record<string, string>[];
    const want = clicksOf({ filter: { country: ['DE'] } });
    expect(logRows).toHaveLength(want.length);
    const pages: any[] = [];
    for (let p = 1; p <= Math.ceil(want.length / 100); p++) pages.push(...(await get(`/analytics/clicks?from=${FROM}&to=${TO}&country=DE&limit=100&page=${p}`)).data);
    expect(logRows.map((r) => ({ ...Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '' ? null : v])), bot: r.bot === 'true', device: r.device, source: r.source })))
      .toEqual(pages);
    const conv = await fetch(`${api.url}/analytics/conversions?from=${FROM}&to=${TO}&format=csv&utm_source=newsletter`, { headers: { authorization: `Bearer ${a.key}` } });
    const convRows = parse(await conv.text(), { columns: true }) as Record<string, string>[];
    const report = (await get(`/analytics/conversions?from=${FROM}&to=${TO}&utm_source=newsletter&limit=100`)).data;
    expect(convRows.map((r) => ({ ...r, value: +r.value! }))).toEqual(report.conversions);

    // With `limit` or `page`, the CSV is that page alone, as the JSON's (the export above is every row).
    const csvPage = async (path: string) => {
      const res = await fetch(`${api.url}${path}&format=csv`, { headers: { authorization: `Bearer ${a.key}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; /);
      return parse(await res.text(), { columns: true }) as Record<string, string>[];
    };
    const logPage = await csvPage(`/analytics/clicks?from=${FROM}&to=${TO}&country=DE&limit=100&page=2`);
    expect(logPage).toHaveLength(100);
    expect(logPage.map((r) => ({ ...Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '' ? null : v])), bot: r.bot === 'true', device: r.device, source: r.source }))).toEqual(pages.slice(100, 200));
    expect(logRows.slice(100, 200)).toEqual(logPage);
    const convPage = await csvPage(`/analytics/conversions?from=${FROM}&to=${TO}&utm_source=newsletter&limit=2&page=2`);
    expect(convPage.map((r) => ({ ...r, value: +r.value! }))).toEqual(report.conversions.slice(2, 4));
    expect(convPage.length).toBe(Math.min(2, Math.max(0, report.conversions.length - 2)));
  }, HEAVY);

  it('experiments: each rule and the default against the control, with the statistics of experiment-statistics.ts', async () => {
    const link = links[0]!;
    const report = experimentReportSchema.parse((await get(`/analytics/experiments/${link.id}?from=${FROM}&to=${TO}`)).data);
    const expected = expectedBreakdown('rule', { linkId: link.id });
    const converted = convertedClicks('rule', { linkId: link.id });
    // Successes are clicks that converted, once each: a click with a second order (an upsell) is one.
    const arm = (e: (typeof expected)[number]) => ({ clicks: e.clicks, conversions: converted.get(e.value) ?? 0 });
    expect(expected.some((e) => e.conversions > arm(e).conversions)).toBe(true);
    const control = expected.find((r) => r.value === 'default')!;
    expect(report.variants.map((v) => v.variant)).toEqual(expected.map((r) => r.value));
    for (const v of report.variants) {
      const e = expected.find((r) => r.value === v.variant)!;
      expect(v, v.variant).toMatchObject({
        clicks: e.clicks, uniqueVisitors: e.uniqueClicks, conversions: e.conversions, convertedClicks: arm(e).conversions,
        conversionRate: rate(arm(e).conversions, e.clicks), revenue: e.revenue, isControl: v.variant === 'default',
      });
      expect(v.revenuePerClick).toBe(Math.round((e.revenue / e.clicks) * 10_000) / 10_000);
      expect(v.comparison).toEqual(v.isControl ? null : compareWithControl(arm(e), arm(control)));
    }
    expect(report.variants.find((v) => v.variant === rules[1]!.id)).toMatchObject({ name: 'Variant B', type: 'percentage' });
    // Below the minimum sample a variant gets no verdict: said, not claimed.
    expect(report.minimumSample).toEqual(MINIMUM_SAMPLE);
    for (const v of report.variants.filter((x) => x.comparison)) {
      const short = [v, report.variants.find((x) => x.isControl)!].some((x) => x.clicks < MINIMUM_SAMPLE.clicks || x.convertedClicks < MINIMUM_SAMPLE.conversions);
      expect(v.comparison!.insufficientSample !== null, v.variant).toBe(short);
      if (short) expect(v.comparison!.significant).toBe(false);
    }
    expect(report.variants.some((v) => v.comparison?.insufficientSample)).toBe(true);
    const other = experimentReportSchema.parse((await get(`/analytics/experiments/${link.id}?from=${FROM}&to=${TO}&control=${rules[0]!.id}`)).data);
    expect(other.variants.find((v) => v.isControl)!.variant).toBe(rules[0]!.id);
    expect((await api.request('GET', `/analytics/experiments/${link.id}?control=rule_unknown1`, { key: a.key })).status).toBe(404);
    expect((await api.request('GET', `/analytics/experiments/${link.id}`, { key: b.key })).status).toBe(404);
  }, HEAVY);

  it('realtime: the last 60 minutes per minute, top links and countries, filters', async () => {
    const now = Date.now();
    const recent: Click[] = [5, 12, 12, 30, 58, 61, 120].map((minutes, i) => ({
      ...clicks.find((c) => c.workspace_id === a.workspaceId && c.kind === 'click' && !c.bot)!,
      ts: now - minutes * 60_000, click_id: `ck_rt_${i}`, visitor_id: `rt${i % 3}`, country: i % 2 ? 'DE' : 'US', link_id: links[i % 2]!.id,
    }));
    await client.insert({ table: 'events', values: [...recent, { ...recent[0]!, click_id: 'ck_rt_bot', bot: true }, { ...recent[0]!, click_id: 'ck_rt_b', workspace_id: b.workspaceId }], format: 'JSONEachRow' });
    for (const [qs, keep] of [['', () => true], ['?country=DE', (c: Click) => c.country === 'DE']] as const) {
      const data = realtimeSchema.parse((await get(`/analytics/realtime${qs}`)).data);
      const from = Date.parse(data.from);
      expect(Date.parse(data.to) - from).toBe(3_600_000);
      const inWindow = recent.filter((c) => c.ts >= from && c.ts < Date.parse(data.to) && keep(c));
      expect(inWindow.length).toBeGreaterThanOrEqual(qs ? 2 : 5);
      expect(data.summary).toEqual({ clicks: inWindow.length, uniqueVisitors: new Set(inWindow.map((c) => c.visitor_id)).size });
      expect(data.minutes).toHaveLength(60);
      expect(data.minutes.filter((m) => m.clicks > 0).map((m) => [m.minute, m.clicks])).toEqual(
        [...new Set(inWindow.map((c) => Math.floor(c.ts / 60_000) * 60_000))].sort().map((m) => [new Date(m).toISOString(), inWindow.filter((c) => Math.floor(c.ts / 60_000) * 60_000 === m).length]),
      );
      const perLink = [...new Set(inWindow.map((c) => c.link_id))].map((id) => ({ linkId: id, shortCode: links.find((l) => l.id === id)!.shortCode, deleted: false, clicks: inWindow.filter((c) => c.link_id === id).length }));
      expect(data.topLinks).toEqual(perLink.sort((x, y) => y.clicks - x.clicks || (x.linkId < y.linkId ? -1 : 1)));
    }
    const other = realtimeSchema.parse((await get('/analytics/realtime', b.key)).data);
    expect(other.summary.clicks).toBe(1);
  }, HEAVY);

  it('realtime: top 5 links and top 5 countries cut from more, with two filters', async () => {
    // A workspace of its own, so no other test's recent clicks count here.
    const c = await api.tenant();
    const own: Array<{ id: string; shortCode: string }> = [];
    for (let i = 0; i < 7; i++) own.push((await api.request('POST', '/links', { key: c.key, body: { destinationUrl: `https://example.com/rt${i}` } })).body.data);
    const now = Date.now();
    const countries = ['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN'];
    const recent: Click[] = [];
    // Link i and country i get 8 - i clicks (ties impossible), some on tablets, a few unknown countries; all within the last 40 minutes.
    for (let i = 0; i < 7; i++) {
      for (let k = 0; k < 8 - i; k++) {
        recent.push({
          ...clicks[0]!, workspace_id: c.workspaceId, link_id: own[i]!.id, campaign_id: '', ts: now - (2 + ((i * 7 + k * 3) % 38)) * 60_000, click_id: `ck_rt5_${i}_${k}`,
          kind: 'click', bot: false, visitor_id: `rt5_${k}`, country: k === 5 ? '' : countries[(i + k) % 7]!, device_class: k % 3 === 0 ? 'tablet' : 'mobile', os: k % 2 ? 'ios' : 'android',
        });
      }
    }
    await client.insert({ table: 'events', values: recent, format: 'JSONEachRow' });
    for (const [qs, keep] of [['', () => true], ['?device=mobile&os=ios', (x: Click) => x.device_class === 'mobile' && x.os === 'ios']] as const) {
      const data = realtimeSchema.parse((await get(`/analytics/realtime${qs}`, c.key)).data);
      const kept = recent.filter(keep);
      expect(data.summary, qs).toEqual({ clicks: kept.length, uniqueVisitors: new Set(kept.map((x) => x.visitor_id)).size });
      const top = <K extends string>(key: (x: Click) => string, name: K) => {
        const counts = new Map<string, number>();
        for (const x of kept) if (key(x) !== '') counts.set(key(x), (counts.get(key(x)) ?? 0) + 1);
        return [...counts].sort((p, q) => q[1] - p[1] || (p[0] < q[0] ? -1 : 1)).slice(0, 5).map(([v, n]) => ({ [name]: v, clicks: n }));
      };
      expect(data.topLinks.map(({ linkId, clicks: n }) => ({ linkId, clicks: n })), qs).toEqual(top((x) => x.link_id, 'linkId'));
      expect(data.topLinks.every((l) => l.shortCode === own.find((o) => o.id === l.linkId)!.shortCode)).toBe(true);
      expect(data.topCountries, qs).toEqual(top((x) => x.country, 'country'));
      if (qs === '') {
        expect(new Set(kept.map((x) => x.link_id)).size).toBe(7);
        expect(data.topLinks).toHaveLength(5);
        expect(new Set(kept.map((x) => x.country).filter(Boolean)).size).toBe(7);
        expect(data.topCountries).toHaveLength(5);
      }
    }
  }, HEAVY);

  it('bad inputs are 400 naming the parameter; unknown dimensions too', async () => {
    const cases: Array<[string, string]> = [
      ['/analytics/breakdown?dimension=colour', 'dimension'],
      ['/analytics/breakdown', 'dimension'],
      ['/analytics/breakdown?dimension=country&limit=1001', 'limit'],
      ['/analytics/breakdown?dimension=country&format=xml', 'format'],
      ['/analytics/breakdown?dimension=country&country=USA', 'country'],
      ['/analytics?device=phone', 'device'],
      ['/analytics?os=ios,beos', 'os'],
      ['/analytics?source=email', 'source'],
      ['/analytics?link=abc', 'link'],
      ['/analytics?rule=42', 'rule'],
      ['/analytics?referrer=a%20b', 'referrer'],
      ['/analytics?compare=next', 'compare'],
      ['/analytics?colour=red', 'colour'],
      ['/analytics/clicks?utm_source=', 'utm_source'],
      ['/analytics/conversions?campaign=x', 'campaign'],
      ['/analytics/realtime?from=2026-01-01', 'from'],
      [`/analytics/experiments/${links[0]?.id}?control=variant`, 'control'],
      ['/analytics/breakdown?dimension=country&from=2026-05-02&to=2026-05-01', 'from'],
      // Only dimension filters may be repeated.
      ['/analytics?from=2026-05-01&from=2026-05-02', 'from'],
      ['/analytics/breakdown?dimension=country&dimension=os', 'dimension'],
      ['/analytics/breakdown?dimension=country&limit=5&limit=6', 'limit'],
      ['/analytics?country=DE&country=', 'country'],
    ];
    for (const [path, param] of cases) {
      const res = await api.request('GET', path, { key: a.key });
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path).join(' '), path).toContain(param);
    }
    const empty = await api.request('GET', '/analytics?utm_source=news,', { key: a.key });
    expect(empty.body.error.details).toEqual([{ path: 'utm_source', message: 'has an empty value; (none) selects clicks without one' }]);
    const twice = await api.request('GET', '/analytics?granularity=day&granularity=week&os=ios&os=android', { key: a.key });
    expect(twice.body.error.details).toEqual([{ path: 'granularity', message: 'given more than once; this parameter takes one value' }]);
  }, HEAVY);

  it('tenant isolation: another workspace sees none of these clicks on any new endpoint or filter', async () => {
    for (const dimension of ['link', 'country', 'rule']) {
      const mine = (await get(`/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}&limit=1000`, b.key)).data;
      const want = clicks.filter((c) => c.workspace_id === b.workspaceId && c.kind === 'click' && !c.bot && inRange(c.ts, FROM, TO));
      expect(mine.reduce((s: number, r: any) => s + r.clicks, 0), dimension).toBe(want.length);
    }
    // B's rows that carry A's link ids count for B, but never with A's short codes.
    const byLink = (await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}&limit=1000`, b.key)).data;
    expect(byLink.filter((r: any) => links.some((l) => l.id === r.value)).every((r: any) => r.shortCode === '')).toBe(true);
    for (const path of [`/analytics/breakdown?dimension=os&link=${links[0]!.id}`, `/analytics/realtime?campaign=${campaigns[0]!.id}`, `/analytics/experiments/${links[0]!.id}`, `/analytics/clicks?format=csv&linkId=${links[0]!.id}`]) {
      const res = await api.request('GET', path, { key: b.key });
      expect(res.status, path).toBe(404);
    }
    // A's rule ids as B's rule= filter (alone or beside default) are 404 on every endpoint, as link and campaign ids are.
    const linkOfB = (await api.request('POST', '/links', { key: b.key, body: { destinationUrl: 'https://example.org/x' } })).body.data;
    for (const qs of [`rule=${rules[0]!.id}`, `rule=default,${rules[1]!.id}`]) {
      for (const path of ['/analytics?', '/analytics/breakdown?dimension=os&', '/analytics/clicks?', '/analytics/conversions?', '/analytics/realtime?', `/analytics/${linkOfB.id}?`, `/analytics/experiments/${linkOfB.id}?`]) {
        const res = await api.request('GET', `${path}${qs}`, { key: b.key });
        expect(res.status, `${path}${qs}`).toBe(404);
        expect(res.body.error, `${path}${qs}`).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('Rule not found') });
      }
    }
    // A's own: its rules, and a deleted rule's id (its clicks are history, as the breakdown shows them), filter as before.
    const deleted = await get(`/analytics/breakdown?dimension=os&from=${FROM}&to=${TO}&limit=1000&rule=rule_deleted1`);
    expect(figures(deleted.data)).toEqual(expectedBreakdown('os', { filter: { rule: ['rule_deleted1'] } }));
    expect((await api.request('GET', `/analytics/breakdown?dimension=os&rule=${rules[0]!.id}`, { key: a.key })).status).toBe(200);
    // An id no rule has and none of the workspace's clicks carry is a 404 as another
    // workspace's rule is, named alike, in the request's order: the answer does not tell
    // whether an id exists elsewhere.
    for (const [key, qs, named] of [
      [a.key, 'rule=rule_nowhere1', 'rule_nowhere1'],
      [a.key, 'rule=rule_deleted1,rule_nowhere1', 'rule_nowhere1'],
      [b.key, `rule=rule_nowhere1,${rules[0]!.id}`, 'rule_nowhere1'],
      [b.key, `rule=${rules[0]!.id},rule_nowhere1`, rules[0]!.id],
      [b.key, 'rule=rule_nowhere1,rule_nowhere2', 'rule_nowhere1'],
    ] as const) {
      for (const path of ['/analytics?', '/analytics/breakdown?dimension=os&', '/analytics/clicks?', '/analytics/conversions?', '/analytics/realtime?', '/analytics/clicks?format=csv&']) {
        const res = await api.request('GET', `${path}${qs}`, { key });
        expect(res.status, `${path}${qs}`).toBe(404);
        expect(res.body.error, `${path}${qs}`).toEqual({ code: 'NOT_FOUND', message: `Rule not found: ${named}` });
      }
    }
    // A deleted rule that decided only bots' clicks filters where bots count, as its row shows there.
    const botsOnly = await get(`/analytics/breakdown?dimension=os&from=${FROM}&to=${TO}&limit=1000&includeBots=true&rule=rule_botsonly1`);
    expect(figures(botsOnly.data)).toEqual(expectedBreakdown('os', { includeBots: true, filter: { rule: ['rule_botsonly1'] } }));
    const botsOnlyInRange = clicks.filter((c) => c.rule_id === 'rule_botsonly1' && inRange(c.ts, FROM, TO)).length;
    expect(botsOnlyInRange).toBeGreaterThan(0);
    expect(botsOnly.data.reduce((sum: number, r: any) => sum + r.clicks, 0)).toBe(botsOnlyInRange);
    expect((await api.request('GET', '/analytics/breakdown?dimension=os&rule=rule_botsonly1', { key: a.key })).status).toBe(404);
  }, HEAVY);

  it('experiments: control must be a rule of this link (or default); another link\'s rule is 404', async () => {
    const body = { campaignId: links[1]!.campaignId, linkId: links[1]!.id, name: 'elsewhere', type: 'percentage', conditions: { percentage: 10 }, destinationUrl: 'https://example.com/elsewhere' };
    const elsewhere = (await api.request('POST', '/rules', { key: a.key, body })).body.data;
    const res = await api.request('GET', `/analytics/experiments/${links[0]!.id}?from=${FROM}&to=${TO}&control=${elsewhere.id}`, { key: a.key });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(elsewhere.id) });
    // The same rule is a valid control on its own link, even with no click decided in the range.
    const own = experimentReportSchema.parse((await get(`/analytics/experiments/${links[1]!.id}?from=${FROM}&to=${TO}&control=${elsewhere.id}`)).data);
    expect(own.control).toBe(elsewhere.id);
    // A campaign-wide rule (no link) of the link's campaign is a rule of the link too.
    const wide = (await api.request('POST', '/rules', { key: a.key, body: { ...body, linkId: null, campaignId: links[0]!.campaignId, name: 'campaign-wide' } })).body.data;
    expect((await api.request('GET', `/analytics/experiments/${links[0]!.id}?from=${FROM}&to=${TO}&control=${wide.id}`, { key: a.key })).status).toBe(200);
    await api.request('DELETE', `/rules/${wide.id}`, { key: a.key });
    await api.request('DELETE', `/rules/${elsewhere.id}`, { key: a.key });
  }, HEAVY);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { analyticsOverviewSchema, clickLogEntrySchema, todayIn } from '../../shared/schemas/analytics.ts';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

interface EventRow {
  workspace_id: string;
  link_id: string;
  ts: number;
  click_id: string;
  kind: 'click' | 'impression';
  campaign_id: string;
  visitor_id: string;
  country: string;
  region: string;
  city: string;
  device_class: string;
  os: string;
  browser: string;
  referrer_host: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  source: string;
  rule_id: string;
  destination: string;
  bot: boolean;
}

// ---- the reference: plain TypeScript over the generated rows, no code shared with the API ----

/** Local calendar date and hour of an instant, via ICU. */
function local(ms: number, timeZone: string): { date: string; hour: string } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' }).formatToParts(ms);
  const p = (t: string) => parts.find((x) => x.type === t)!.value;
  return { date: `${p('year')}-${p('month')}-${p('day')}`, hour: p('hour') };
}
const shift = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const mondayOf = (date: string) => shift(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7));
const monthOf = (date: string) => `${date.slice(0, 7)}-01`;

interface Expect {
  workspaceId: string;
  from: string;
  to: string;
  tz?: string;
  granularity?: 'hour' | 'day' | 'week' | 'month';
  linkId?: string;
  campaignId?: string;
  source?: 'link' | 'qr';
  includeBots?: boolean;
  /** The zero-filled labels, written out by the test. */
  labels: string[];
  /** Short codes the caller may see; any other link reads as ''. */
  shortCodes: Map<string, string>;
}

function expected(all: EventRow[], e: Expect) {
  const tz = e.tz ?? 'UTC';
  const rows = all.filter((r) => {
    const d = local(r.ts, tz).date;
    return r.workspace_id === e.workspaceId && r.kind === 'click' && (e.includeBots || !r.bot) && d >= e.from && d <= e.to &&
      (e.linkId === undefined || r.link_id === e.linkId) && (e.campaignId === undefined || r.campaign_id === e.campaignId) &&
      (e.source === undefined || r.source === e.source);
  });
  const label = (r: EventRow) => {
    const l = local(r.ts, tz);
    switch (e.granularity ?? 'day') {
      case 'hour': return `${l.date}T${l.hour}:00`;
      case 'day': return l.date;
      case 'week': return mondayOf(l.date);
      case 'month': return monthOf(l.date);
    }
  };
  const groups = new Map<string, EventRow[]>();
  for (const r of rows) groups.set(label(r), [...(groups.get(label(r)) ?? []), r]);
  for (const key of groups.keys()) expect(e.labels, `bucket ${key} is in the written-out labels`).toContain(key);
  const uniq = (rs: EventRow[]) => new Set(rs.map((r) => r.visitor_id)).size;

  const perLink = new Map<string, number>();
  for (const r of rows) perLink.set(r.link_id, (perLink.get(r.link_id) ?? 0) + 1);
  const topLinks = [...perLink].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10)
    // The workspace's links are live here; an id of none of them has no code and no `deleted`.
    .map(([linkId, clicks]) => ({ linkId, ...(e.shortCodes.has(linkId) ? { shortCode: e.shortCodes.get(linkId)!, deleted: false } : { shortCode: '' }), clicks, conversions: 0 }));

  // Largest remainder, written independently: exact fractions, ties mobile > desktop > tablet.
  const names = ['mobile', 'desktop', 'tablet'] as const;
  const counts = names.map((n) => rows.filter((r) => r.device_class === n).length);
  const devices = { mobile: 0, desktop: 0, tablet: 0 };
  if (rows.length > 0) {
    const shares = counts.map((c, i) => ({ i, whole: Math.floor((c * 100) / rows.length), frac: (c * 100) % rows.length }));
    shares.forEach((s) => (devices[names[s.i]!] = s.whole));
    const missing = 100 - shares.reduce((a, s) => a + s.whole, 0);
    shares.slice().sort((a, b) => b.frac - a.frac || a.i - b.i).slice(0, missing).forEach((s) => devices[names[s.i]!]++);
  }

  const perCountry = new Map<string, number>();
  for (const r of rows) if (r.country) perCountry.set(r.country, (perCountry.get(r.country) ?? 0) + 1);

  return {
    summary: { totalClicks: rows.length, uniqueClicks: uniq(rows), conversions: 0, revenue: 0, conversionRate: 0 },
    timeSeries: e.labels.map((date) => ({ date, clicks: groups.get(date)?.length ?? 0, uniqueClicks: uniq(groups.get(date) ?? []), conversions: 0 })),
    topLinks,
    devices,
    countries: [...perCountry].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([country, clicks]) => ({ country, clicks })),
  };
}

function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = shift(d, 1)) out.push(d);
  return out;
}
const hours24 = Array.from({ length: 24 }, (_, h) => `${String(h).padStart(2, '0')}:00`);

describe('analytics from ClickHouse', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let b: { key: string; workspaceId: string };
  let linksA: { id: string; shortCode: string; campaignId: string }[] = [];
  let linkB: { id: string; shortCode: string; campaignId: string };
  let secondCampaign: string;
  const shortCodes = new Map<string, string>();
  const events: EventRow[] = [];

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    a = await api.tenant();
    b = await api.tenant();
    secondCampaign = (await api.request('POST', '/campaigns', { key: a.key, body: { name: 'second' } })).body.data.id;
    // 12 links, so the top-10 cut is exercised; the last four in a second campaign.
    for (let i = 0; i < 12; i++) {
      const body = { destinationUrl: `https://example.com/${i}`, ...(i >= 8 ? { campaignId: secondCampaign } : {}) };
      const link = (await api.request('POST', '/links', { key: a.key, body })).body.data;
      linksA.push(link);
      shortCodes.set(link.id, link.shortCode);
    }
    linkB = (await api.request('POST', '/links', { key: b.key, body: { destinationUrl: 'https://example.org/' } })).body.data;

    const rand = mulberry32(20260329);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const windows = [
      [Date.parse('2026-03-25T00:00:00Z'), Date.parse('2026-04-03T00:00:00Z')], // Europe/Berlin springs forward 2026-03-29
      [Date.parse('2026-10-30T00:00:00Z'), Date.parse('2026-11-03T00:00:00Z')], // America/New_York falls back 2026-11-01
    ] as const;
    const make = (n: number, workspaceId: string, link: { id: string; campaignId: string }): EventRow => {
      const [lo, hi] = pick(windows);
      const bot = rand() < 0.1;
      return {
        workspace_id: workspaceId, link_id: link.id, ts: lo + Math.floor(rand() * (hi - lo)), click_id: `ck_${n}`,
        kind: rand() < 0.15 ? 'impression' : 'click', campaign_id: link.campaignId,
        visitor_id: bot ? `bot${Math.floor(rand() * 3)}` : `v${Math.floor(rand() * 60)}`,
        country: pick(['US', 'US', 'DE', 'DE', 'FR', 'GB', '']), device_class: pick(['mobile', 'mobile', 'desktop', 'desktop', 'desktop', 'tablet']),
        os: pick(['ios', 'android', 'windows', '']), browser: pick(['chrome', 'safari', '']), referrer_host: pick(['news.example', '']),
        utm_source: pick(['newsletter', '']), utm_medium: pick(['email', '']), utm_campaign: pick(['spring', '']), utm_term: '', utm_content: pick(['hero', '']),
        source: pick(['link', 'link', 'qr']), rule_id: pick(['', 'rule_x']), destination: `https://example.com/${n % 4}`, bot,
        // Derived from n, not drawn: the draws above stay as they were.
        region: ['Bavaria', '', 'Texas'][n % 3]!, city: ['Munich', 'Berlin', ''][n % 3]!,
      };
    };
    // Skewed link choice so top links have distinct, meaningful counts.
    for (let n = 0; n < 3000; n++) events.push(make(n, a.workspaceId, linksA[Math.floor(rand() * rand() * linksA.length)]!));
    // Workspace B: its own link, and rows that reuse A's link ids; none may ever show up for A.
    for (let n = 3000; n < 3400; n++) events.push(make(n, b.workspaceId, n % 2 ? linkB : linksA[n % linksA.length]!));
    await client.insert({ table: 'events', values: events, format: 'JSONEachRow' });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  async function overview(path: string, key = a.key) {
    const res = await api.request('GET', path, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return analyticsOverviewSchema.parse(res.body.data);
  }

  it('day buckets in UTC: totals, exact uniques over the range, top links, devices, countries', async () => {
    const data = await overview('/analytics?from=2026-03-20&to=2026-04-05');
    const want = expected(events, { workspaceId: a.workspaceId, from: '2026-03-20', to: '2026-04-05', labels: days('2026-03-20', '2026-04-05'), shortCodes });
    expect(data).toEqual(want);
    expect(data.summary.totalClicks).toBeGreaterThan(1000);
    // Exact uniques, not a sum of per-day uniques.
    expect(data.summary.uniqueClicks).toBeLessThan(data.timeSeries.reduce((s, p) => s + p.uniqueClicks, 0));
    expect(data.topLinks).toHaveLength(10);
    expect(data.devices.mobile + data.devices.desktop + data.devices.tablet).toBe(100);
  });

  it('day buckets in Europe/Berlin across the spring-forward change', async () => {
    const data = await overview('/analytics?from=2026-03-26&to=2026-04-01&timezone=Europe/Berlin');
    expect(data).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-03-26', to: '2026-04-01', tz: 'Europe/Berlin', labels: days('2026-03-26', '2026-04-01'), shortCodes }));
    // Zone names are canonicalised before they reach ClickHouse, which is case-sensitive.
    expect(await overview('/analytics?from=2026-03-26&to=2026-04-01&timezone=europe/berlin')).toEqual(data);
  });

  it('hour buckets in Europe/Berlin: 23 local hours on 2026-03-29, no 02:00', async () => {
    const data = await overview('/analytics?from=2026-03-28&to=2026-03-30&granularity=hour&timezone=Europe/Berlin');
    const labels = days('2026-03-28', '2026-03-30').flatMap((d) => hours24.map((h) => `${d}T${h}`)).filter((l) => l !== '2026-03-29T02:00');
    expect(data.timeSeries).toHaveLength(71);
    expect(data).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-03-28', to: '2026-03-30', tz: 'Europe/Berlin', granularity: 'hour', labels, shortCodes }));
  });

  it('hour buckets in America/New_York: the repeated 01:00 on 2026-11-01 is one bucket of two hours', async () => {
    const data = await overview('/analytics?from=2026-10-31&to=2026-11-01&granularity=hour&timezone=America/New_York');
    const labels = days('2026-10-31', '2026-11-01').flatMap((d) => hours24.map((h) => `${d}T${h}`));
    expect(data).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-10-31', to: '2026-11-01', tz: 'America/New_York', granularity: 'hour', labels, shortCodes }));
    const rowsIn = (fromIso: string, toIso: string) => events.filter((r) => r.workspace_id === a.workspaceId && r.kind === 'click' && !r.bot && r.ts >= Date.parse(fromIso) && r.ts < Date.parse(toIso)).length;
    expect(data.timeSeries.find((p) => p.date === '2026-11-01T01:00')!.clicks).toBe(rowsIn('2026-11-01T05:00:00Z', '2026-11-01T07:00:00Z'));
  });

  it('day buckets in America/New_York across the fall-back change, bots included', async () => {
    const data = await overview('/analytics?from=2026-10-29&to=2026-11-03&timezone=America/New_York&includeBots=true');
    expect(data).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-10-29', to: '2026-11-03', tz: 'America/New_York', includeBots: true, labels: days('2026-10-29', '2026-11-03'), shortCodes }));
  });

  it('week buckets start on Monday (Europe/Berlin), month buckets cover the year', async () => {
    const weeks = await overview('/analytics?from=2026-03-25&to=2026-04-08&granularity=week&timezone=Europe/Berlin');
    expect(weeks).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-03-25', to: '2026-04-08', tz: 'Europe/Berlin', granularity: 'week', labels: ['2026-03-23', '2026-03-30', '2026-04-06'], shortCodes }));
    const months = await overview('/analytics?from=2026-01-01&to=2026-12-31&granularity=month');
    const labels = Array.from({ length: 12 }, (_, m) => `2026-${String(m + 1).padStart(2, '0')}-01`);
    expect(months).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-01-01', to: '2026-12-31', granularity: 'month', labels, shortCodes }));
  });

  it('filters by campaign and link; /analytics/{linkId} equals the linkId filter', async () => {
    const base = { workspaceId: a.workspaceId, from: '2026-03-01', to: '2026-11-30', labels: Array.from({ length: 9 }, (_, m) => `2026-${String(m + 3).padStart(2, '0')}-01`), shortCodes, granularity: 'month' as const };
    const byCampaign = await overview(`/analytics?from=2026-03-01&to=2026-11-30&granularity=month&campaignId=${secondCampaign}`);
    expect(byCampaign).toEqual(expected(events, { ...base, campaignId: secondCampaign }));
    expect(byCampaign.summary.totalClicks).toBeGreaterThan(0);
    expect(byCampaign.topLinks.every((t) => linksA.slice(8).some((l) => l.id === t.linkId))).toBe(true);
    const link = linksA[0]!;
    const byLink = await overview(`/analytics?from=2026-03-01&to=2026-11-30&granularity=month&linkId=${link.id}`);
    expect(byLink).toEqual(expected(events, { ...base, linkId: link.id }));
    expect(byLink.summary.totalClicks).toBeGreaterThan(0);
    expect(await overview(`/analytics/${link.id}?from=2026-03-01&to=2026-11-30&granularity=month`)).toEqual(byLink);
    // By its short code too, as PATCH /links/{id} takes it, in the path or as the linkId scope.
    expect(await overview(`/analytics/${link.shortCode}?from=2026-03-01&to=2026-11-30&granularity=month`)).toEqual(byLink);
    expect(await overview(`/analytics?from=2026-03-01&to=2026-11-30&granularity=month&linkId=${link.shortCode}`)).toEqual(byLink);
  });

  it('campaign and source filters, alone and together, west of UTC: partial UTC days at both ends', async () => {
    const base = { workspaceId: a.workspaceId, from: '2026-10-29', to: '2026-11-03', tz: 'America/New_York', labels: days('2026-10-29', '2026-11-03'), shortCodes };
    const q = '/analytics?from=2026-10-29&to=2026-11-03&timezone=America/New_York';
    const cases: Array<[string, Partial<Expect>]> = [
      [`&campaignId=${secondCampaign}`, { campaignId: secondCampaign }],
      ['&source=qr', { source: 'qr' }],
      [`&campaignId=${secondCampaign}&source=link`, { campaignId: secondCampaign, source: 'link' }],
      [`&campaignId=${secondCampaign}&source=qr&includeBots=true`, { campaignId: secondCampaign, source: 'qr', includeBots: true }],
    ];
    for (const [qs, filter] of cases) {
      const data = await overview(q + qs);
      expect(data, qs).toEqual(expected(events, { ...base, ...filter }));
      expect(data.summary.totalClicks, qs).toBeGreaterThan(0);
    }
  });

  it('week and day buckets east of UTC (Asia/Tokyo): whole days from daily rollups, the rest hour by hour', async () => {
    const weeks = await overview('/analytics?from=2026-03-24&to=2026-04-06&granularity=week&timezone=Asia/Tokyo');
    expect(weeks).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-03-24', to: '2026-04-06', tz: 'Asia/Tokyo', granularity: 'week', labels: ['2026-03-23', '2026-03-30', '2026-04-06'], shortCodes }));
    const oneDay = await overview(`/analytics?from=2026-03-29&to=2026-03-29&timezone=Asia/Tokyo&source=qr`);
    expect(oneDay).toEqual(expected(events, { workspaceId: a.workspaceId, from: '2026-03-29', to: '2026-03-29', tz: 'Asia/Tokyo', source: 'qr', labels: ['2026-03-29'], shortCodes }));
    expect(oneDay.summary.totalClicks).toBeGreaterThan(0);
  });

  it('another workspace never sees these clicks; its link and campaign ids are 404 on /analytics/{linkId} and as filters', async () => {
    const mine = await overview('/analytics?from=2026-03-01&to=2026-11-30&granularity=month', b.key);
    expect(mine).toEqual(expected(events, { workspaceId: b.workspaceId, from: '2026-03-01', to: '2026-11-30', granularity: 'month', labels: Array.from({ length: 9 }, (_, m) => `2026-${String(m + 3).padStart(2, '0')}-01`), shortCodes: new Map([[linkB.id, linkB.shortCode]]) }));
    // B's rows that carry A's link ids still count for B, but A's short codes never leak into B's answer.
    expect(mine.topLinks.filter((l) => l.linkId !== linkB.id).every((l) => l.shortCode === '')).toBe(true);
    const other = await api.request('GET', `/analytics/${linksA[0]!.id}`, { key: b.key });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    expect((await api.request('GET', '/analytics/link_doesnotexist', { key: a.key })).status).toBe(404);
    // Another workspace's short code names nothing here; an unknown one neither.
    expect((await api.request('GET', `/analytics/${linksA[0]!.shortCode}`, { key: b.key })).status).toBe(404);
    expect((await api.request('GET', `/analytics/experiments/${linksA[0]!.shortCode}`, { key: b.key })).status).toBe(404);
    expect((await api.request('GET', '/analytics/no-such-code', { key: a.key })).status).toBe(404);
    for (const qs of [`linkId=${linkB.id}`, `linkId=${linkB.shortCode}`, 'linkId=no-such-code', `campaignId=${linkB.campaignId}`, `link=${linksA[0]!.id},${linkB.id}`, `campaign=${linkB.campaignId}`, 'linkId=link_doesnotexist']) {
      for (const path of ['/analytics', '/analytics/clicks', '/analytics/conversions', '/analytics/breakdown?dimension=country&', '/analytics/realtime']) {
        const res = await api.request('GET', `${path}${path.endsWith('&') ? '' : '?'}${qs}`, { key: a.key });
        expect(res.status, `${path} ${qs}`).toBe(404);
        expect(res.body.error.code, `${path} ${qs}`).toBe('NOT_FOUND');
      }
    }
    // The CSV exports (format=csv or Accept: text/csv), A's own link's report and its experiment, and B's link in their paths.
    const scoped: Array<[string, Record<string, string>?]> = [];
    for (const qs of [`linkId=${linkB.id}`, `campaignId=${linkB.campaignId}`, `link=${linkB.id}`, `campaign=${linkB.campaignId}`]) {
      for (const path of ['/analytics/clicks', '/analytics/conversions', '/analytics/breakdown?dimension=country&']) {
        const sep = path.endsWith('&') ? '' : '?';
        scoped.push([`${path}${sep}${qs}&format=csv`], [`${path}${sep}${qs}`, { accept: 'text/csv' }]);
      }
      if (!qs.startsWith('linkId')) scoped.push([`/analytics/${linksA[0]!.id}?${qs}`], [`/analytics/experiments/${linksA[0]!.id}?${qs}`]);
    }
    scoped.push([`/analytics/experiments/${linkB.id}`], [`/analytics/experiments/${linkB.id}?from=2026-03-01&to=2026-03-31`], [`/analytics/${linkB.id}?from=2026-03-01&to=2026-03-31`]);
    for (const [path, headers] of scoped) {
      const res = await api.request('GET', path, { key: a.key, ...(headers ? { headers } : {}) });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(res.body.error.code, path).toBe('NOT_FOUND');
    }
    // The same requests by B itself are answered.
    const own = await api.request('GET', `/analytics/clicks?linkId=${linkB.id}&format=csv`, { key: b.key });
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await api.request('GET', `/analytics/experiments/${linkB.id}`, { key: b.key })).status).toBe(200);
  });

  it('defaults: the last 30 days ending today (UTC), by day', async () => {
    // "Today" is read on both sides of the request: a run at midnight may see either day.
    const today = () => new Date().toISOString().slice(0, 10);
    const before = today();
    const data = await overview('/analytics');
    const after = today();
    const last = data.timeSeries.at(-1)!.date;
    expect([before, after]).toContain(last);
    expect(data.timeSeries.map((p) => p.date)).toEqual(days(shift(last, -29), last));
  });

  it('defaults end today in the asked zone, which for zones far from UTC is another date than UTC\'s for hours a day', async () => {
    for (const timezone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Kolkata']) {
      const today = () => todayIn(timezone);
      const before = today();
      const data = await overview(`/analytics?timezone=${timezone}`);
      const after = today();
      const last = data.timeSeries.at(-1)!.date;
      expect([before, after], timezone).toContain(last);
      expect(data.timeSeries.map((p) => p.date)).toEqual(days(shift(last, -29), last));
      // Only `from`: from local today (a date UTC may not have reached yet) is a one-day range, not a 400.
      const fromToday = await api.request('GET', `/analytics/breakdown?dimension=country&from=${last}&timezone=${timezone}`, { key: a.key });
      expect(fromToday.status, JSON.stringify(fromToday.body)).toBe(200);
    }
    // Kiritimati (UTC+14) and Pago Pago (UTC-11) are never on the same date.
    expect(todayIn('Pacific/Kiritimati')).not.toBe(todayIn('Pacific/Pago_Pago'));
  });

  it('bad inputs are 400 VALIDATION_ERROR naming the parameter', async () => {
    const cases: [string, string][] = [
      ['from=2026-02-30', 'from'],
      ['from=2026-3-01', 'from'],
      ['to=yesterday', 'to'],
      ['from=2026-04-02&to=2026-04-01', 'from'],
      ['granularity=year', 'granularity'],
      ['timezone=Mars/Olympus', 'timezone'],
      ['timezone=', 'timezone'],
      // ICU knows them, ClickHouse does not (a 500 before).
      ['timezone=SystemV/AST4', 'timezone'],
      ['timezone=systemv/est5edt', 'timezone'],
      ['color=blue', 'color'],
      ['from=2025-01-01&to=2026-03-01', 'to'],
      ['from=2026-01-01&to=2026-02-15&granularity=hour', 'to'],
      ['includeBots=yes', 'includeBots'],
    ];
    for (const [qs, path] of cases) {
      const res = await api.request('GET', `/analytics?${qs}`, { key: a.key });
      expect(res.status, qs).toBe(400);
      expect(res.body.error.code, qs).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path), qs).toContain(path);
    }
    const linkQs = await api.request('GET', `/analytics/${linksA[0]!.id}?linkId=${linksA[1]!.id}`, { key: a.key });
    expect(linkQs.status).toBe(400);
    for (const qs of ['limit=0', 'limit=101', 'page=0', 'device=phone', 'country=USA', 'from=2026-04-02&to=2026-04-01', 'foo=1']) {
      const res = await api.request('GET', `/analytics/clicks?${qs}`, { key: a.key });
      expect(res.status, qs).toBe(400);
      expect(res.body.error.code, qs).toBe('VALIDATION_ERROR');
    }
  });

  it('a key without analytics:read is 403; no key is 401', async () => {
    const limited = await api.tenant({ scopes: ['links:read'] });
    const paths = ['/analytics', '/analytics/clicks', `/analytics/${linksA[0]!.id}`, '/analytics/breakdown?dimension=country', '/analytics/realtime', `/analytics/experiments/${linksA[0]!.id}`, '/analytics/conversions'];
    for (const path of paths) {
      expect((await api.request('GET', path, { key: limited.key })).status, path).toBe(403);
      expect((await api.request('GET', path)).status, path).toBe(401);
    }
  });

  describe('click log', () => {
    const clicksOf = (workspaceId: string, keep: (r: EventRow) => boolean = () => true) =>
      events
        .filter((r) => r.workspace_id === workspaceId && r.kind === 'click' && keep(r))
        .sort((x, y) => y.ts - x.ts || (x.click_id < y.click_id ? 1 : -1));

    it('newest first, paginated, bots excluded by default, every field', async () => {
      const all = clicksOf(a.workspaceId, (r) => !r.bot);
      const page3 = await api.request('GET', '/analytics/clicks?page=3&limit=50', { key: a.key });
      expect(page3.status).toBe(200);
      expect(page3.body.pagination).toEqual({ page: 3, limit: 50, total: all.length, totalPages: Math.ceil(all.length / 50) });
      expect(page3.body.data.map((c: { clickId: string }) => c.clickId)).toEqual(all.slice(100, 150).map((r) => r.click_id));
      const first = (await api.request('GET', '/analytics/clicks?limit=1', { key: a.key })).body.data[0];
      const r = all[0]!;
      expect(clickLogEntrySchema.parse(first)).toEqual({
        clickId: r.click_id, linkId: r.link_id, campaignId: r.campaign_id, timestamp: new Date(r.ts).toISOString(),
        country: r.country || null, region: r.region || null, city: r.city || null, device: r.device_class, os: r.os || null, browser: r.browser || null,
        referrerHost: r.referrer_host || null, utmSource: r.utm_source || null, utmMedium: r.utm_medium || null,
        utmCampaign: r.utm_campaign || null, utmTerm: r.utm_term || null, utmContent: r.utm_content || null,
        source: r.source, ruleId: r.rule_id || null, destination: r.destination, bot: false,
      });
      // Region, city and destination are on every row as stored, and filter the log.
      const rows = (await api.request('GET', '/analytics/clicks?limit=100', { key: a.key })).body.data;
      expect(rows.map((c: { clickId: string; region: string | null; city: string | null; destination: string | null }) => [c.clickId, c.region, c.city, c.destination]))
        .toEqual(all.slice(0, 100).map((x) => [x.click_id, x.region || null, x.city || null, x.destination]));
      const last = await api.request('GET', `/analytics/clicks?page=${Math.ceil(all.length / 100)}&limit=100`, { key: a.key });
      expect(last.body.data.map((c: { clickId: string }) => c.clickId)).toEqual(all.slice(Math.floor((all.length - 1) / 100) * 100).map((x) => x.click_id));
    });

    it('filters: link, campaign, country, device, dates, bots', async () => {
      const link = linksA[1]!;
      const cases: [string, (r: EventRow) => boolean][] = [
        [`linkId=${link.id}&country=de&device=mobile`, (r) => !r.bot && r.link_id === link.id && r.country === 'DE' && r.device_class === 'mobile'],
        [`campaignId=${secondCampaign}`, (r) => !r.bot && r.campaign_id === secondCampaign],
        ['from=2026-03-29&to=2026-03-30', (r) => !r.bot && r.ts >= Date.parse('2026-03-29T00:00:00Z') && r.ts < Date.parse('2026-03-31T00:00:00Z')],
        ['includeBots=true&device=tablet', (r) => r.device_class === 'tablet'],
        ['city=Munich,(none)&region=Bavaria&destination=https://example.com/1', (r) => !r.bot && ['Munich', ''].includes(r.city) && r.region === 'Bavaria' && r.destination === 'https://example.com/1'],
      ];
      for (const [qs, keep] of cases) {
        const want = clicksOf(a.workspaceId, keep);
        const res = await api.request('GET', `/analytics/clicks?limit=100&${qs}`, { key: a.key });
        expect(res.status, qs).toBe(200);
        expect(res.body.pagination.total, qs).toBe(want.length);
        expect(res.body.data.map((c: { clickId: string }) => c.clickId), qs).toEqual(want.slice(0, 100).map((r) => r.click_id));
      }
      expect(clicksOf(a.workspaceId, (r) => r.bot).length).toBeGreaterThan(0);
    });
  });
});

describe('analytics without ClickHouse', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi('postgres');
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers 503 SERVICE_UNAVAILABLE in the error envelope', async () => {
    const { key } = await api.tenant();
    for (const path of ['/analytics', '/analytics/clicks']) {
      const res = await api.request('GET', path, { key });
      expect(res.status, path).toBe(503);
      expect(res.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
    }
  });
});

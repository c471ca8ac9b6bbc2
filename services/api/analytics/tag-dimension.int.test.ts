import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { analyticsOverviewSchema, breakdownRowSchema } from '../../../shared/schemas/analytics.ts';
import { mulberry32 } from '../../../shared/testing/seeded-random.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';
import { LinkValueStore, linkValueRows } from './link-values.ts';
import { breakdown } from './breakdown-query.ts';
import { LinkValuePeriods } from './link-value-periods.ts';
import { createLogger } from '../../../shared/logger.ts';

/**
 * The `tag` dimension: tags live on links (Postgres), clicks in ClickHouse. A click
 * of a link tagged a and b counts under a and under b in a breakdown, and a filter
 * tag=a keeps the clicks of links tagged a. Expected figures are computed here from
 * the generated clicks and the tags the test gave its links (no code shared with
 * the queries); fixed past dates, so the answers hold at any hour.
 */

interface Click {
  workspace_id: string; link_id: string; ts: number; click_id: string; kind: 'click'; campaign_id: string; visitor_id: string;
  country: string; device_class: string; source: string; bot: boolean;
}
interface Conversion { workspace_id: string; link_id: string; ts: number; conversion_id: string; click_id: string; campaign_id: string; event: string; value: number; currency: string; order_id: string; attributed: boolean; source: string }

const FROM = '2026-03-01';
const TO = '2026-03-07';
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The local date of an instant in a zone (en-CA formats YYYY-MM-DD). */
const localDay = (ms: number, zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(ms);
const HEAVY = 180_000;

describe('analytics by tag', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let b: { key: string; workspaceId: string };
  /** A's links and the tags each carries now (the stored, normalised spelling). */
  const tagsOf = new Map<string, string[]>();
  const aLinks: Array<{ id: string; campaignId: string }> = [];
  let bLink: { id: string; campaignId: string };
  const clicks: Click[] = [];
  const conversions: Conversion[] = [];

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    a = await api.tenant();
    b = await api.tenant();
    // Mixed case and spaces: stored normalised (`Summer Sale` is `summer sale`).
    for (const tags of [['Summer Sale', 'email'], ['summer sale'], [], ['email', 'print'], ['retired']]) {
      const link = (await api.request('POST', '/links', { key: a.key, body: { destinationUrl: 'https://example.com/t', tags } })).body.data;
      aLinks.push(link);
      tagsOf.set(link.id, link.tags);
    }
    expect(tagsOf.get(aLinks[0]!.id)).toEqual(['summer sale', 'email']);
    // A deleted link's clicks are history: they keep counting under its tags.
    expect((await api.request('DELETE', `/links/${aLinks[4]!.id}`, { key: a.key })).status).toBe(200);
    // B tags its own link `email` too; none of its clicks may count for A, nor A's tags for B.
    bLink = (await api.request('POST', '/links', { key: b.key, body: { destinationUrl: 'https://example.org/', tags: ['email'] } })).body.data;

    const rand = mulberry32(18);
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const lo = Date.parse('2026-02-25T00:00:00Z');
    const hi = Date.parse('2026-03-09T00:00:00Z');
    const make = (n: number, workspaceId: string, link: { id: string; campaignId: string }): Click => ({
      workspace_id: workspaceId, link_id: link.id, ts: lo + Math.floor(rand() * (hi - lo)), click_id: `ck_tag_${n}`, kind: 'click', campaign_id: link.campaignId,
      visitor_id: `v${Math.floor(rand() * 40)}`, country: pick(['US', 'DE', '']), device_class: pick(['mobile', 'desktop']), source: 'link', bot: rand() < 0.05,
    });
    for (let n = 0; n < 900; n++) clicks.push(make(n, a.workspaceId, aLinks[Math.floor(rand() * aLinks.length)]!));
    // B: its own tagged link, and rows that reuse A's link ids (in B they carry no tag).
    for (let n = 900; n < 1100; n++) clicks.push(make(n, b.workspaceId, n % 2 ? bLink : aLinks[n % aLinks.length]!));
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
    let m = 0;
    for (const c of clicks) {
      if (rand() > 0.15) continue;
      conversions.push({ workspace_id: c.workspace_id, link_id: c.link_id, ts: c.ts + Math.floor(rand() * 3_600_000), conversion_id: `conv_tag_${m}`, click_id: c.click_id, campaign_id: c.campaign_id, event: 'purchase', value: 2 + (m % 5) * 1.5, currency: 'EUR', order_id: `t${m}`, attributed: true, source: 's2s' });
      m++;
    }
    await client.insert({ table: 'conversions', values: conversions, format: 'JSONEachRow' });
  }, HEAVY);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  // ---- the reference ----

  const tagsOfClick = (c: Click) => (c.workspace_id === a.workspaceId ? tagsOf.get(c.link_id) ?? [] : c.link_id === bLink.id ? ['email'] : []);
  /** tag filter values ('(none)': untagged links): a click passes when its link has any of them. */
  const passes = (c: Click, tags: string[] | undefined) => tags === undefined || tagsOfClick(c).some((t) => tags.includes(t)) || (tags.includes('(none)') && tagsOfClick(c).length === 0);
  /** Whether an instant is in FROM..TO as local days of `zone` (its whole-hour offsets put every click on its hour's day). */
  const inRange = (ms: number, zone = 'UTC') => localDay(ms, zone) >= FROM && localDay(ms, zone) <= TO;
  const clicksOf = (workspaceId: string, tags?: string[], country?: string, zone = 'UTC') =>
    clicks.filter((c) => c.workspace_id === workspaceId && !c.bot && inRange(c.ts, zone) && passes(c, tags) && (country === undefined || c.country === country));
  const conversionsOf = (workspaceId: string, tags?: string[], zone = 'UTC') => {
    const byClick = new Map(clicks.map((c) => [`${c.workspace_id}/${c.click_id}`, c]));
    return conversions.filter((v) => v.workspace_id === workspaceId && inRange(v.ts, zone)).map((v) => ({ ...v, click: byClick.get(`${v.workspace_id}/${v.click_id}`)! })).filter((v) => passes(v.click, tags));
  };
  const money = (xs: number[]) => Math.round(xs.reduce((s, x) => s + x, 0) * 10_000) / 10_000;
  const rate = (conv: number, n: number) => (n === 0 ? 0 : Math.round((conv / n) * 10_000) / 100);

  function expectedByTag(workspaceId: string, filter?: string[], zone = 'UTC') {
    const rows = new Map<string, { clicks: number; visitors: Set<string>; conversions: number; revenue: number[] }>();
    const row = (v: string) => rows.get(v) ?? rows.set(v, { clicks: 0, visitors: new Set(), conversions: 0, revenue: [] }).get(v)!;
    const valuesOf = (c: Click) => (tagsOfClick(c).length ? tagsOfClick(c) : ['']);
    for (const c of clicksOf(workspaceId, filter, undefined, zone)) {
      for (const t of valuesOf(c)) {
        row(t).clicks++;
        row(t).visitors.add(c.visitor_id);
      }
    }
    for (const v of conversionsOf(workspaceId, filter, zone)) {
      for (const t of valuesOf(v.click)) {
        row(t).conversions++;
        row(t).revenue.push(v.value);
      }
    }
    return [...rows]
      .map(([value, r]) => ({ value: value === '' ? null : value, clicks: r.clicks, uniqueClicks: r.visitors.size, conversions: r.conversions, revenue: money(r.revenue), conversionRate: rate(r.conversions, r.clicks) }))
      .sort((x, y) => y.clicks - x.clicks || y.conversions - x.conversions || ((x.value ?? '') < (y.value ?? '') ? -1 : 1));
  }

  const get = async (path: string, key = a.key) => {
    const res = await api.request('GET', path, { key });
    expect(res.status, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    return res.body;
  };
  const figures = (rows: any[]) => rows.map(({ value, clicks, uniqueClicks, conversions, revenue, conversionRate }) => ({ value, clicks, uniqueClicks, conversions, revenue, conversionRate }));

  it('breaks down by tag: a click counts once under each tag of its link, untagged links under (none), deleted links kept', async () => {
    const body = await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&limit=100`);
    const want = expectedByTag(a.workspaceId);
    expect(figures(body.data)).toEqual(want);
    expect(want.map((r) => r.value).sort()).toEqual(['email', 'print', 'retired', 'summer sale', null].sort());
    for (const r of body.data) breakdownRowSchema.parse(r);
    expect(body.data.find((r: any) => r.value === null)).toMatchObject({ label: '(none)' });
    // The rows add up to more than the clicks: links with two tags count twice.
    const all = clicksOf(a.workspaceId).length;
    expect(body.data.reduce((s: number, r: any) => s + r.clicks, 0)).toBe(all + clicksOf(a.workspaceId).filter((c) => tagsOfClick(c).length === 2).length);
    expect(body.pagination).toEqual({ page: 1, limit: 100, total: 5, totalPages: 1 });
  }, HEAVY);

  it('filters by tag on the breakdown, the overview, the click log and the conversions report', async () => {
    const cases: Array<[string, string[]]> = [
      ['email', ['email']],
      ['Summer%20Sale', ['summer sale']],
      ['print,retired', ['print', 'retired']],
      ['(none)', ['(none)']],
      ['(none),print', ['(none)', 'print']],
      ['no-such-tag', ['no-such-tag']],
      // Repeated: the values comma-joined (OR).
      ['print&tag=Retired', ['print', 'retired']],
      ['(none)&tag=email,print&tag=email', ['(none)', 'email', 'print']],
    ];
    for (const [qs, tags] of cases) {
      const byTag = await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&limit=100&tag=${qs}`);
      expect(figures(byTag.data), qs).toEqual(expectedByTag(a.workspaceId, tags));
      const rows = clicksOf(a.workspaceId, tags);
      const conv = conversionsOf(a.workspaceId, tags);
      const overview = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&tag=${qs}`)).data);
      expect(overview.summary, qs).toEqual({ totalClicks: rows.length, uniqueClicks: new Set(rows.map((r) => r.visitor_id)).size, conversions: conv.length, revenue: money(conv.map((v) => v.value)), conversionRate: rate(conv.length, rows.length) });
      const log = await get(`/analytics/clicks?from=${FROM}&to=${TO}&limit=5&tag=${qs}`);
      expect(log.pagination.total, qs).toBe(rows.length);
      const report = (await get(`/analytics/conversions?from=${FROM}&to=${TO}&limit=5&tag=${qs}`)).data;
      expect(report.summary.totalConversions, qs).toBe(conv.length);
    }
    expect(clicksOf(a.workspaceId, ['email']).length).toBeGreaterThan(0);
    // AND with another dimension.
    const de = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&tag=email&country=DE`)).data);
    expect(de.summary.totalClicks).toBe(clicksOf(a.workspaceId, ['email'], 'DE').length);
  }, HEAVY);

  it('follows a link retagged: analytics use the tags a link has now', async () => {
    const link = aLinks[2]!;
    expect((await api.request('PATCH', `/links/${link.id}`, { key: a.key, body: { tags: ['print'] } })).status).toBe(200);
    tagsOf.set(link.id, ['print']);
    try {
      const body = await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&limit=100`);
      expect(figures(body.data)).toEqual(expectedByTag(a.workspaceId));
      expect(body.data.map((r: any) => r.value)).not.toContain(null);
    } finally {
      await api.request('PATCH', `/links/${link.id}`, { key: a.key, body: { tags: [] } });
      tagsOf.set(link.id, []);
    }
  }, HEAVY);

  it('tenant isolation: tags are per workspace, and so are their clicks', async () => {
    const mine = await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&limit=100`, b.key);
    expect(figures(mine.data)).toEqual(expectedByTag(b.workspaceId));
    // B's rows that carry A's link ids are untagged in B: A's tags never show.
    expect(mine.data.map((r: any) => r.value).sort()).toEqual(['email', null].sort());
    const email = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&tag=email`, b.key)).data);
    expect(email.summary.totalClicks).toBe(clicksOf(b.workspaceId, ['email']).length);
    const summer = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&tag=summer%20sale`, b.key)).data);
    expect(summer.summary.totalClicks).toBe(0);
    const aEmail = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&tag=email`)).data);
    expect(aEmail.summary.totalClicks).toBe(clicksOf(a.workspaceId, ['email']).length);
  }, HEAVY);

  it('thousands of tagged links: link sets too long for a URL still reach ClickHouse (breakdown and filter)', async () => {
    // A workspace of its own with 3,000 links tagged `bulk` (ids ~27 characters: the link
    // set is ~90 KB, where a URL stops at ~16 KB), a few of them clicked.
    const c = await api.tenant();
    const ids = Array.from({ length: 3000 }, (_, i) => `link_bulktag${String(i).padStart(6, '0')}`);
    const sql = api.db.sql;
    const [campaign] = await sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${c.workspaceId} AND is_default`;
    await sql`INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url, tags)
      SELECT id, ${c.workspaceId}, ${campaign!.id}, '', 'bulk' || n, 'https://example.com/bulk', ARRAY['bulk', 'tag ' || (n % 7)]
      FROM unnest(${ids}::text[]) WITH ORDINALITY AS x(id, n)`;
    const bulkClicks = ids.filter((_, i) => i % 100 === 0).map((id, n): Click => ({
      workspace_id: c.workspaceId, link_id: id, ts: Date.parse('2026-03-03T12:00:00Z') + n * 1000, click_id: `ck_bulktag_${n}`, kind: 'click', campaign_id: campaign!.id,
      visitor_id: `bv${n % 7}`, country: 'DE', device_class: 'mobile', source: 'link', bot: false,
    }));
    await client.insert({ table: 'events', values: bulkClicks, format: 'JSONEachRow' });
    const byTag = await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&limit=100`, c.key);
    expect(byTag.data.find((r: any) => r.value === 'bulk')).toMatchObject({ clicks: bulkClicks.length, uniqueClicks: 7 });
    expect(byTag.pagination.total).toBe(8);
    const filtered = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}&tag=bulk`, c.key)).data);
    expect(filtered.summary.totalClicks).toBe(bulkClicks.length);
    expect((await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}&tag=(none)`, c.key)).data).toEqual([]);
  }, HEAVY);

  it('tags reach ClickHouse as a snapshot per content: written once, shared, rewritten when tags change or after a day', async () => {
    const c = await api.tenant();
    const link = (await api.request('POST', '/links', { key: c.key, body: { destinationUrl: 'https://example.com/snap', tags: ['one'] } })).body.data;
    const markers = async () =>
      (await (await client.query({ query: `SELECT fingerprint, count() AS n FROM link_values WHERE workspace_id = {w:String} AND link_id = '' GROUP BY fingerprint ORDER BY fingerprint`, query_params: { w: c.workspaceId }, format: 'JSONEachRow' })).json<{ fingerprint: string; n: number }>())
        .map((r) => [r.fingerprint, Number(r.n)] as const);
    const snapshotOf = async (fingerprint: string) =>
      (await (await client.query({ query: `SELECT link_id, link_values FROM link_values WHERE workspace_id = {w:String} AND fingerprint = {f:String} AND link_id != '' ORDER BY link_id`, query_params: { w: c.workspaceId, f: fingerprint }, format: 'JSONEachRow' })).json<{ link_id: string; link_values: string[] }>());
    expect(await markers()).toEqual([]);
    await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}`, c.key);
    await get(`/analytics?from=${FROM}&to=${TO}&tag=one`, c.key);
    const [first] = await markers();
    expect(first![1]).toBe(1);
    expect(await snapshotOf(first![0])).toEqual([{ link_id: link.id, link_values: ['one'] }]);
    // Another API instance (a store of its own, nothing seen yet) finds it: nothing is written twice.
    expect(await new LinkValueStore(client, api.db.sql).snapshots(c.workspaceId, ['tag'])).toEqual({ tag: first![0] });
    expect(await markers()).toEqual([first]);
    // Retagged: a new snapshot, read at once.
    expect((await api.request('PATCH', `/links/${link.id}`, { key: c.key, body: { tags: ['two'] } })).status).toBe(200);
    const byTag = await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&tag=two`, c.key);
    expect(byTag.data).toEqual([]);
    const now = await markers();
    expect(now).toHaveLength(2);
    const second = now.find(([f]) => f !== first![0])!;
    expect(await snapshotOf(second[0])).toEqual([{ link_id: link.id, link_values: ['two'] }]);
    // A snapshot written over a day ago is written again by the next instance that needs it.
    await client.command({ query: `ALTER TABLE link_values UPDATE written_at = now() - INTERVAL 2 DAY WHERE workspace_id = {w:String} SETTINGS mutations_sync = 2`, query_params: { w: c.workspaceId } });
    expect(await new LinkValueStore(client, api.db.sql).snapshots(c.workspaceId, ['tag'])).toEqual({ tag: second[0] });
    expect((await markers()).find(([f]) => f === second[0])![1]).toBe(2);
    // Twice written, read once per link.
    expect((await get(`/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}`, c.key)).data).toEqual([]);
    expect(await snapshotOf(second[0])).toHaveLength(2);
    expect((await client.query({ query: `SELECT count() AS n FROM ${linkValueRows(c.workspaceId, 'tag', second[0], 't').sql}`, query_params: linkValueRows(c.workspaceId, 'tag', second[0], 't').params, format: 'JSONEachRow' }).then((r) => r.json<{ n: number }>()))[0]!.n).toBe(1);
  }, HEAVY);

  it('a retag landing between the fingerprint and the read of the tags files them under their own state, not the older one', async () => {
    const c = await api.tenant();
    const link = (await api.request('POST', '/links', { key: c.key, body: { destinationUrl: 'https://example.com/race', tags: ['x'] } })).body.data;
    const retag = (tags: string[]) => api.db.sql`UPDATE links SET tags = ${tags} WHERE id = ${link.id}`;
    const snapshotOf = async (fingerprint: string) =>
      (await (await client.query({ query: `SELECT link_id, link_values FROM link_values WHERE workspace_id = {w:String} AND fingerprint = {f:String} AND link_id != '' ORDER BY link_id`, query_params: { w: c.workspaceId, f: fingerprint }, format: 'JSONEachRow' })).json<{ link_id: string; link_values: string[] }>());
    // The real ClickHouse client, with another instance's change let in at the first question
    // the store asks it (whether the snapshot is written): after the fingerprint, before the tags.
    let changed = false;
    const racing = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (...args: Parameters<ClickHouseClient['query']>) => {
          if (!changed) {
            changed = true;
            await retag([]);
          }
          return target.query(...args);
        };
      },
    }) as ClickHouseClient;
    // The request reads the state the tags were read in (untagged): no link under any tag.
    const answered = (await new LinkValueStore(racing, api.db.sql).snapshots(c.workspaceId, ['tag'])).tag!;
    expect(changed).toBe(true);
    expect(await snapshotOf(answered)).toEqual([]);
    // Tagged again, as when the request began: that state's snapshot holds the link under x.
    await retag(['x']);
    const tagged = (await new LinkValueStore(client, api.db.sql).snapshots(c.workspaceId, ['tag'])).tag!;
    expect(tagged).not.toBe(answered);
    expect(await snapshotOf(tagged)).toEqual([{ link_id: link.id, link_values: ['x'] }]);
  }, HEAVY);

  it('caches its periods in the background and reads them once all are current: late clicks, the current day, a retag, old batches, two instances', async () => {
    const logger = createLogger('tag-periods-test', 'silent');
    const totals = async () =>
      (await (await client.query({
        query: `SELECT period, toString(start) AS start, count(DISTINCT batch) AS n FROM link_value_periods
          WHERE workspace_id = {w:String} AND kind = 'total' GROUP BY period, start ORDER BY start`,
        query_params: { w: a.workspaceId },
        format: 'JSONEachRow',
      })).json<{ period: string; start: string; n: number }>());
    const tagSnapshot = async () => (await new LinkValueStore(client, api.db.sql).snapshots(a.workspaceId, ['tag'])).tag!;
    const query = (fingerprint: string, nowMs: number) => ({ workspaceId: a.workspaceId, dimension: 'tag' as const, fingerprint, first: FROM, last: TO, nowMs });
    const asOf = async (periods: LinkValuePeriods, nowMs: number) =>
      (await breakdown(client, api.db.sql, { workspaceId: a.workspaceId, dimension: 'tag', from: FROM, to: TO, timezone: 'UTC', page: 1, limit: 100, includeBots: false, filters: {}, linkValues: { tag: await tagSnapshot() }, nowMs }, periods)).rows;
    /** The cached periods as of `nowMs`, or null; `fill`: when null, start their fill as a request does after answering. */
    const lookup = async (p: LinkValuePeriods, nowMs: number, fill = false) => {
      const found = await p.cached(query(await tagSnapshot(), nowMs));
      if (fill) found.fill();
      return found.periods;
    };
    const past = Date.parse('2026-04-01T12:00:00Z');
    const clickDays = () => [...new Set(clicksOf(a.workspaceId).map((c) => day(c.ts)))].sort();

    // Through the API: the first answer is read without the cache and starts a fill;
    // once it is done every day with a click is cached.
    const path = `/analytics/breakdown?dimension=tag&from=${FROM}&to=${TO}&limit=100`;
    expect(figures((await get(path)).data)).toEqual(expectedByTag(a.workspaceId));
    for (let i = 0; i < 200 && (await totals()).length < clickDays().length; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await totals()).map((r) => [r.period, r.start.slice(0, 10)])).toEqual(clickDays().map((d) => ['day', d]));
    expect(figures((await get(path)).data)).toEqual(expectedByTag(a.workspaceId));
    // In a zone the edge hours are read live around the cached days.
    expect(figures((await get(`${path}&timezone=America/New_York`)).data)).toEqual(expectedByTag(a.workspaceId, undefined, 'America/New_York'));

    // Without the minute between fills of a key, so each step's fill runs.
    const periods = new LinkValuePeriods(client, logger, { fillCooldownMs: 0 });
    expect(await lookup(periods, past)).not.toBeNull();
    expect(figures(await asOf(periods, past))).toEqual(expectedByTag(a.workspaceId));

    // A click arrives late for 2026-03-03: that day is stale (answered without the cache)
    // until a fill writes it again; the other days keep their batch.
    const link = aLinks[0]!;
    const late: Click = { workspace_id: a.workspaceId, link_id: link.id, ts: Date.parse('2026-03-03T08:00:00Z'), click_id: 'ck_tag_late_day', kind: 'click', campaign_id: link.campaignId, visitor_id: 'v-late', country: 'DE', device_class: 'mobile', source: 'link', bot: false };
    const before = await totals();
    await client.insert({ table: 'events', values: [late], format: 'JSONEachRow' });
    clicks.push(late);
    expect(await lookup(periods, past, true)).toBeNull();
    await periods.settled();
    expect((await totals()).map((r) => [r.start, r.n])).toEqual(before.map((r) => [r.start, r.start.startsWith('2026-03-03') ? r.n + 1 : r.n]));
    expect(await lookup(periods, past)).not.toBeNull();
    expect(figures(await asOf(periods, past))).toEqual(expectedByTag(a.workspaceId));

    // The current day as of 2026-03-05 15:20 UTC: its hours that ended 10 minutes ago
    // or more are cached per hour (those with a click), the rest read live.
    const nowMs = Date.parse('2026-03-05T15:20:00Z');
    expect(await lookup(periods, nowMs, true)).toBeNull();
    await periods.settled();
    const cachedHours = (await lookup(periods, nowMs))!.keys.filter((k) => k.startsWith('hour/')).map((k) => k.slice(5, 24));
    const clickHours = (to: string) =>
      [...new Set(clicksOf(a.workspaceId).filter((c) => day(c.ts) === '2026-03-05' && new Date(c.ts).toISOString() < to).map((c) => `${new Date(c.ts).toISOString().slice(0, 13).replace('T', ' ')}:00:00`))].sort();
    expect(cachedHours).toEqual(clickHours('2026-03-05T15:00'));
    expect(figures(await asOf(periods, nowMs))).toEqual(expectedByTag(a.workspaceId));
    const lateHour: Click = { ...late, ts: Date.parse('2026-03-05T10:30:00Z'), click_id: 'ck_tag_late_hour', visitor_id: 'v-late-hour' };
    await client.insert({ table: 'events', values: [lateHour], format: 'JSONEachRow' });
    clicks.push(lateHour);
    expect(figures(await asOf(periods, nowMs))).toEqual(expectedByTag(a.workspaceId));
    await periods.settled();
    expect(figures(await asOf(periods, nowMs))).toEqual(expectedByTag(a.workspaceId));
    expect((await totals()).find((r) => r.start === '2026-03-05 10:00:00')).toMatchObject({ period: 'hour', n: 2 });
    // 15:09: the hour that ended at 15:00 is not settled yet, and 14:00-15:00 is read live.
    expect((await lookup(periods, Date.parse('2026-03-05T15:09:59Z')))!.keys.filter((k) => k.startsWith('hour/')).map((k) => k.slice(5, 24))).toEqual(clickHours('2026-03-05T14:00'));

    // A retagged link with clicks: the new snapshot's periods are filled, and read with its new tags.
    const retagged = aLinks[1]!;
    const oldTags = tagsOf.get(retagged.id)!;
    expect((await api.request('PATCH', `/links/${retagged.id}`, { key: a.key, body: { tags: ['print', 'fresh'] } })).status).toBe(200);
    tagsOf.set(retagged.id, ['print', 'fresh']);
    try {
      expect(clicksOf(a.workspaceId).some((c) => c.link_id === retagged.id)).toBe(true);
      expect(await lookup(periods, past, true)).toBeNull();
      expect(figures(await asOf(periods, past))).toEqual(expectedByTag(a.workspaceId));
      await periods.settled();
      expect(await lookup(periods, past)).not.toBeNull();
      expect(figures(await asOf(periods, past))).toEqual(expectedByTag(a.workspaceId));
    } finally {
      await api.request('PATCH', `/links/${retagged.id}`, { key: a.key, body: { tags: oldTags } });
      tagsOf.set(retagged.id, oldTags);
    }

    // Batches over 6 days old are not read, though their totals still match.
    await client.command({ query: `ALTER TABLE link_value_periods UPDATE written_at = now() - INTERVAL 6 DAY - INTERVAL 1 HOUR WHERE workspace_id = {w:String} SETTINGS mutations_sync = 2`, query_params: { w: a.workspaceId } });
    // Two API instances, each its own store, fill at once: each period is then read from one batch.
    // Both find the batches stale before either fill starts (one fill done before the other's
    // lookup would be read as current by it, which is right, but not this case).
    const other = new LinkValuePeriods(client, logger, { fillCooldownMs: 0 });
    const snapshot = await tagSnapshot();
    const stale = await Promise.all([periods.cached(query(snapshot, past)), other.cached(query(snapshot, past))]);
    expect(stale.map((found) => found.periods)).toEqual([null, null]);
    for (const found of stale) found.fill();
    await Promise.all([periods.settled(), other.settled()]);
    expect(await lookup(other, past)).not.toBeNull();
    expect(figures(await asOf(other, past))).toEqual(expectedByTag(a.workspaceId));
    expect(figures(await asOf(periods, past))).toEqual(expectedByTag(a.workspaceId));

    // An instance fills a key at most once a minute: a second late click within it is
    // answered exactly, without the cache, and starts no fill.
    const cooled = new LinkValuePeriods(client, logger);
    const lateAgain = async (n: number) => {
      const c: Click = { ...late, ts: Date.parse('2026-03-04T09:00:00Z') + n, click_id: `ck_tag_late_again_${n}`, visitor_id: `v-again-${n}` };
      await client.insert({ table: 'events', values: [c], format: 'JSONEachRow' });
      clicks.push(c);
    };
    await lateAgain(1);
    expect(await lookup(cooled, past, true)).toBeNull();
    await cooled.settled();
    expect(await lookup(cooled, past)).not.toBeNull();
    await lateAgain(2);
    const written = await totals();
    expect(await lookup(cooled, past, true)).toBeNull();
    await cooled.settled();
    expect(await totals()).toEqual(written);
    expect(await lookup(cooled, past)).toBeNull();
    expect(figures(await asOf(cooled, past))).toEqual(expectedByTag(a.workspaceId));
  }, HEAVY);

  it('bad tag filters are 400 naming the parameter', async () => {
    for (const path of [
      '/analytics?tag=',
      '/analytics?tag=a,,b',
      `/analytics?tag=${'x'.repeat(51)}`,
      '/analytics?tag=a%01b',
      '/analytics/breakdown?dimension=tags',
      `/analytics/clicks?tag=${Array.from({ length: 101 }, (_, i) => `t${i}`).join(',')}`,
    ]) {
      const res = await api.request('GET', path, { key: a.key });
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path).join(' '), path).toMatch(/tag|dimension/);
    }
  }, HEAVY);
});

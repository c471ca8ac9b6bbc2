import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { createApiKey } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { startIngester, type Ingester } from '../ingester/ingester.ts';
import { conversionEvents } from '../ingester/event-tables.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { clickHouseLinkCounters } from './link-counters.ts';
import { pixelConversionId } from '../../shared/conversion-id.ts';
import { ABANDONED_CLAIM_MS } from './conversion-orders.ts';

const secret = Buffer.alloc(32, 9);
const DAY = 24 * 3600_000;

/** POST /conversions/s2s through the bus and the conversion ingester into ClickHouse (embedded). */
describe('server-to-server conversions', () => {
  let ch: TestClickHouse;
  let clickhouse: ClickHouseClient;
  let bus: Bus;
  let ingester: Ingester;
  let api: TestApi;
  let key: string;
  let workspaceId: string;
  let linkId: string;
  let campaignId: string;

  const post = (body: unknown, k = key) => api.request('POST', '/conversions/s2s', { key: k, body });
  const stored = async (conversionId: string) =>
    (await (await clickhouse.query({ query: 'SELECT * FROM conversions WHERE conversion_id = {id:String}', query_params: { id: conversionId }, format: 'JSONEachRow' })).json<Record<string, unknown>>());
  const eventually = async <T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 10_000;
    let value = await read();
    while (!done(value) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      value = await read();
    }
    return value;
  };

  beforeAll(async () => {
    ch = await createTestClickHouse();
    clickhouse = connectClickHouse(ch.url);
    await migrateClickHouse(clickhouse);
    bus = createMemoryBus();
    const logger = createLogger('test', 'silent');
    ingester = startIngester({ kind: conversionEvents, bus, clickhouse, logger, consumerName: 'conversions-test', maxMessages: 100, lingerMs: 20 });
    api = await startTestApi('postgres', { bus, secret, analytics: clickhouse, counters: clickHouseLinkCounters(clickhouse, createLogger('test', 'silent')) });
    ({ key, workspaceId } = await api.tenant());
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://shop.example', conversionTracking: true, trackingType: 's2s' } })).body.data;
    linkId = link.id;
    campaignId = link.campaignId;
  }, 60_000);
  afterAll(async () => {
    await ingester?.stop();
    await api?.close();
    await clickhouse?.close();
    await ch?.close();
  });

  it('attributes a conversion to its click\'s link and campaign, and stores it once', async () => {
    const clickId = createClickId(secret, linkId, Date.now() - 3_600_000);
    const res = await post({ clickId, event: 'purchase', value: 49.95, currency: 'eur', orderId: 'order-1' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ conversionId: expect.stringMatching(/^conv_/), attributed: true, linkId, campaignId, duplicate: false });
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows).toEqual([
      expect.objectContaining({ workspace_id: workspaceId, link_id: linkId, click_id: clickId, event: 'purchase', value: 49.95, currency: 'EUR', order_id: 'order-1', attributed: true, source: 's2s' }),
    ]);
  });

  it('a repeated orderId answers 200 with duplicate:true and the first conversionId, recording nothing new', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    const first = await post({ clickId, value: 10, orderId: 'order-dup' });
    const again = await post({ click_id: clickId, value: 99, order_id: 'order-dup' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ conversionId: first.body.data.conversionId, attributed: true, linkId, campaignId, duplicate: true });
    await eventually(() => stored(first.body.data.conversionId), (r) => r.length > 0);
    const all = await (await clickhouse.query({ query: "SELECT count() AS n FROM conversions WHERE order_id = 'order-dup'", format: 'JSONEachRow' })).json<{ n: number }>();
    expect(Number(all[0]!.n)).toBe(1);
  });

  it('an orderId claimed by a request that died before publishing is recorded by a retry, not answered as a duplicate of nothing', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    // What a request leaves when the API dies between claiming the order id and publishing its conversion.
    const claim = (orderId: string, conversionId: string, ageMs: number) => api.db.sql`
      INSERT INTO conversion_orders (workspace_id, order_id, conversion_id, link_id, campaign_id, attributed, unpublished_since)
      VALUES (${workspaceId}, ${orderId}, ${conversionId}, ${linkId}, ${campaignId}, true, now() - make_interval(secs => ${ageMs / 1000}))`;
    await claim('order-orphan', 'conv_orphaned', ABANDONED_CLAIM_MS + 5_000);
    const retried = await post({ clickId, event: 'purchase', value: 12.5, orderId: 'order-orphan' });
    expect(retried.status).toBe(201);
    expect(retried.body.data).toEqual({ conversionId: 'conv_orphaned', attributed: true, linkId, campaignId, duplicate: false });
    const rows = await eventually(() => stored('conv_orphaned'), (r) => r.length > 0);
    expect(rows).toEqual([expect.objectContaining({ order_id: 'order-orphan', value: 12.5, event: 'purchase', source: 's2s' })]);
    // Recorded now: the next retry is the duplicate it is.
    const again = await post({ clickId, event: 'purchase', value: 12.5, orderId: 'order-orphan' });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ conversionId: 'conv_orphaned', duplicate: true });

    // A claim younger than a publish can take is another request still at work: retry shortly.
    await claim('order-in-flight', 'conv_in_flight', 0);
    const busy = await post({ clickId, orderId: 'order-in-flight' });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('retry in a few seconds') });
    expect(await stored('conv_in_flight')).toEqual([]);

    // A claim an older API wrote (it publishes before answering, and knows no unpublished_since):
    // published, so its repeat is the duplicate it is, however old, during a rolling upgrade too.
    await api.db.sql`
      INSERT INTO conversion_orders (workspace_id, order_id, conversion_id, link_id, campaign_id, attributed, created_at)
      VALUES (${workspaceId}, 'order-by-older-api', 'conv_older', ${linkId}, ${campaignId}, true, now() - interval '1 hour')`;
    const older = await post({ clickId, orderId: 'order-by-older-api' });
    expect(older.status).toBe(200);
    expect(older.body.data).toMatchObject({ conversionId: 'conv_older', duplicate: true });
  });

  it('a timestamp before its click is a 400 naming timestamp; within the clock skew it is attributed', async () => {
    const clickAt = Date.now() - DAY;
    const clickId = createClickId(secret, linkId, clickAt);
    const early = await post({ clickId, timestamp: new Date(clickAt - 3600_000).toISOString() });
    expect(early.status).toBe(400);
    expect(early.body.error.details).toEqual([{ path: 'timestamp', message: `before its click (${new Date(clickAt).toISOString()})` }]);
    const skewed = await post({ clickId, timestamp: new Date(clickAt - 30_000).toISOString() });
    expect(skewed.status).toBe(201);
    expect(skewed.body.data.attributed).toBe(true);
  });

  it('outside the 30-day window it is recorded but not attributed; defaults apply', async () => {
    const clickAt = Date.now() - 40 * DAY;
    const res = await post({ clickId: createClickId(secret, linkId, clickAt), timestamp: new Date(clickAt + 31 * DAY).toISOString() });
    expect(res.status).toBe(201);
    expect(res.body.data.attributed).toBe(false);
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows[0]).toMatchObject({ event: 'conversion', value: 0, currency: 'USD', order_id: '', attributed: false });
  });

  it('a forged, garbled or foreign click id is a 404', async () => {
    const good = createClickId(secret, linkId, Date.now());
    const tampered = good.slice(0, -2) + (good.endsWith('AA') ? 'BB' : 'AA');
    const otherSecret = createClickId(Buffer.alloc(32, 1), linkId, Date.now());
    const stranger = await api.tenant();
    const theirLink = (await api.request('POST', '/links', { key: stranger.key, body: { destinationUrl: 'https://other.example' } })).body.data.id;
    const foreign = createClickId(secret, theirLink, Date.now());
    for (const clickId of [tampered, otherSecret, 'ck_nope', 'garbage', foreign]) {
      const res = await post({ clickId });
      expect(res.status, clickId).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Click not found' });
    }
    expect((await post({ clickId: foreign }, stranger.key)).status).toBe(201);
  });

  it('refuses bad bodies with the field named', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    const cases: Array<[unknown, string[]]> = [
      [{}, ['clickId']],
      [{ clickId, value: -1 }, ['value']],
      [{ clickId, value: '10' }, ['value']],
      [{ clickId, currency: 'XXY' }, ['currency']],
      [{ clickId, currency: 'US' }, ['currency']],
      [{ clickId, event: 'refund' }, ['event']],
      // ClickHouse keeps 4 decimal places: more would be cut off in reports while webhooks carried them.
      [{ clickId, value: 10.00009 }, ['value']],
      [{ clickId, value: 0.000099 }, ['value']],
      [{ clickId, value: 1e-7 }, ['value']],
      [{ clickId, orderId: 'café-1' }, ['orderId']],
      [{ clickId, orderId: '   ' }, ['orderId']],
      // More than 5 minutes (clock skew) in the future: it would count on a day still to come.
      [{ clickId, timestamp: new Date(Date.now() + 3_600_000).toISOString() }, ['timestamp']],
      [{ clickId, timestamp: new Date(Date.now() + 6 * DAY).toISOString() }, ['timestamp']],
      [{ clickId, timestamp: 'yesterday' }, ['timestamp']],
      // Outside what ClickHouse's DateTime64 and the epoch hold (1970-01-01 .. 2299-12-31, UTC).
      [{ clickId, timestamp: '2300-01-01T00:00:00Z' }, ['timestamp']],
      [{ clickId, timestamp: '2299-12-31T23:59:59-14:00' }, ['timestamp']],
      [{ clickId, timestamp: '1969-12-31T23:59:59.999Z' }, ['timestamp']],
      [{ clickId, timestamp: '1970-01-01T00:30:00+01:00' }, ['timestamp']],
      [{ clickId, timestamp: '9999-12-31T23:59:59Z' }, ['timestamp']],
      [{ clickId, orderId: '' }, ['orderId']],
      [{ clickId, coupon: 'X' }, ['coupon']],
      [{ clickId, click_id: clickId }, ['click_id (duplicate of clickId)']],
      // Names every object inherits are keys like any other (their path was a function's source).
      [{ clickId, constructor: 1 }, ['constructor']],
      [{ clickId, toString: 'x' }, ['toString']],
      [JSON.parse(`{"clickId":"${clickId}","__proto__":{"a":1}}`), ['__proto__']],
    ];
    for (const [body, paths] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toEqual(paths);
    }
  });

  it('takes a conversion time at either end of what the stores hold, and stores it as sent', async () => {
    // The latest is now plus clock skew; a minute ahead is within it.
    const inAMinute = new Date(Date.now() + 60_000);
    for (const timestamp of ['1970-01-01T00:00:00.000Z', '1970-01-01T01:00:00.000+01:00', inAMinute.toISOString()]) {
      // A conversion follows its click: the earliest follow a click at the epoch.
      const clickAt = timestamp.startsWith('1970') ? 0 : Date.now();
      const res = await post({ clickId: createClickId(secret, linkId, clickAt), timestamp });
      expect(res.status, timestamp).toBe(201);
      expect(res.body.data.attributed, timestamp).toBe(true);
      const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
      expect(Date.parse(`${String(rows[0]!.ts).replace(' ', 'T')}Z`), timestamp).toBe(Date.parse(timestamp));
    }
  });

  it('explains a value with more than 4 decimal places, and stores one with 4 exactly as sent', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    const refused = await post({ clickId, value: 10.00009, currency: 'BHD' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ path: 'value', message: expect.stringContaining('at most 4 decimal places') })]);
    const res = await post({ clickId, value: 10.0001, currency: 'BHD' });
    expect(res.status).toBe(201);
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows[0]).toMatchObject({ value: 10.0001, currency: 'BHD' });
  });

  it('takes event names in any case, stored lowercase, as the pixel does', async () => {
    const res = await post({ clickId: createClickId(secret, linkId, Date.now()), event: 'Purchase', value: 5 });
    expect(res.status).toBe(201);
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows[0]).toMatchObject({ event: 'purchase' });
  });

  it('trims an orderId as the pixel does, so " SP-1" and "SP-1" are one order', async () => {
    const clickId = createClickId(secret, linkId, Date.now());
    const first = await post({ clickId, value: 7, orderId: ' SP-1' });
    const again = await post({ clickId, value: 7, orderId: 'SP-1 ' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ conversionId: first.body.data.conversionId, duplicate: true });
    const rows = await eventually(() => stored(first.body.data.conversionId), (r) => r.length > 0);
    expect(rows[0]).toMatchObject({ order_id: 'SP-1' });
  });

  it('is documented as it is validated: aliases listed, currency default USD, the 200 example a duplicate', async () => {
    const document = (await (await fetch(`${api.url}/openapi.json`)).json()) as Record<string, any>;
    const body = document.components.schemas.ConversionS2s;
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['clickId', 'click_id', 'orderId', 'order_id']));
    expect(body.properties.currency.default).toBe('USD');
    expect(body.properties.value.description).toContain('at most 4 decimal places');
    const answers = document.paths['/conversions/s2s'].post.responses;
    expect(answers['200'].content['application/json'].example.data.duplicate).toBe(true);
    expect(answers['201'].content['application/json'].example.data.duplicate).toBe(false);
    // What the document shows is what the API takes: the aliases, the default currency.
    const res = await post({ click_id: createClickId(secret, linkId, Date.now()), order_id: 'documented-1', value: 3 });
    expect(res.status).toBe(201);
    const rows = await eventually(() => stored(res.body.data.conversionId), (r) => r.length > 0);
    expect(rows[0]).toMatchObject({ order_id: 'documented-1', currency: 'USD' });
  });

  it('needs the conversions:write scope', async () => {
    const readOnly = await createApiKey(api.db.sql, { workspaceId, scopes: ['links:read'] });
    const res = await post({ clickId: createClickId(secret, linkId, Date.now()) }, readOnly.key);
    expect(res.status).toBe(403);
  });

  it('reports conversions (SPEC 2.5) and feeds the overview, counting attributed ones, each order once', async () => {
    const tenant = await api.tenant();
    const newLink = async () => (await api.request('POST', '/links', { key: tenant.key, body: { destinationUrl: 'https://shop.example/x' } })).body.data.id as string;
    const [a, b] = [await newLink(), await newLink()];
    // Everything happens on yesterday (UTC) after noon, and the report asks for that day:
    // stamps relative to now would straddle midnight for part of every day.
    const noon = Math.floor(Date.now() / DAY) * DAY - DAY + 12 * 3_600_000;
    const day = new Date(noon).toISOString().slice(0, 10);
    const at = (hoursAfterNoon: number) => new Date(noon + hoursAfterNoon * 3_600_000).toISOString();
    const sent: Array<{ link: string; event: string; value: number; currency?: string; orderId?: string; attributed: boolean }> = [
      { link: a, event: 'purchase', value: 100, orderId: 'o-1', attributed: true },
      { link: a, event: 'purchase', value: 100, orderId: 'o-1', attributed: true }, // duplicate postback
      { link: a, event: 'signup', value: 0, attributed: true },
      { link: b, event: 'purchase', value: 25.5, currency: 'EUR', orderId: 'o-2', attributed: true },
      { link: b, event: 'lead', value: 3, attributed: false },
    ];
    const ids: string[] = [];
    for (const [i, c] of sent.entries()) {
      const clickAt = c.attributed ? noon : noon - 40 * DAY;
      const res = await post(
        { clickId: createClickId(secret, c.link, clickAt), event: c.event, value: c.value, ...(c.currency ? { currency: c.currency } : {}), ...(c.orderId ? { orderId: c.orderId } : {}), timestamp: c.attributed ? at(2 - i * 0.1) : at(0.5) },
        tenant.key,
      );
      expect([200, 201]).toContain(res.status);
      if (res.status === 201) ids.push(res.body.data.conversionId);
    }
    // Clicks for the rate: 8 on a, 2 on b (one bot on b, not counted).
    const clickRow = (link: string, n: number, bot = false) => ({
      workspace_id: tenant.workspaceId, link_id: link, ts: noon + 1_800_000, click_id: `ck_rate_${link}_${n}`, kind: 'click', campaign_id: 'c',
      visitor_id: `v${n}`, country: 'US', device_class: 'desktop', os: '', browser: '', referrer_host: '', utm_source: '', utm_medium: '',
      utm_campaign: '', utm_term: '', utm_content: '', source: 'link', rule_id: '', destination: '', bot,
    });
    await clickhouse.insert({ table: 'events', values: [...Array.from({ length: 8 }, (_, n) => clickRow(a, n)), clickRow(b, 1), clickRow(b, 2), clickRow(b, 3, true)], format: 'JSONEachRow' });
    await eventually(() => Promise.all(ids.map(stored)), (r) => r.every((x) => x.length > 0));

    // Independent expectation: attributed, each order once.
    const counted = [sent[0]!, sent[2]!, sent[3]!];
    const revenue = counted.reduce((s, c) => s + c.value, 0);
    const report = await api.request('GET', `/analytics/conversions?from=${day}&to=${day}`, { key: tenant.key });
    expect(report.status).toBe(200);
    expect(report.body.data.summary).toEqual({ totalConversions: 3, totalRevenue: revenue, averageValue: Math.round((revenue / 3) * 10_000) / 10_000, conversionRate: 30 });
    expect(report.body.data.byEvent).toEqual({ purchase: 2, signup: 1, lead: 0, install: 0, conversion: 0 });
    // Mixed currencies: the total adds them as sent; byCurrency is what to read.
    expect(report.body.data.byCurrency).toEqual([
      { currency: 'USD', conversions: 2, revenue: 100 },
      { currency: 'EUR', conversions: 1, revenue: 25.5 },
    ]);
    expect(report.body.data.conversions.map((c: { linkId: string; event: string }) => [c.linkId, c.event])).toEqual([[a, 'purchase'], [a, 'signup'], [b, 'purchase']]);
    expect(report.body.data.conversions[2]).toEqual({ conversionId: expect.stringMatching(/^conv_/), clickId: expect.stringMatching(/^ck_/), linkId: b, event: 'purchase', value: 25.5, currency: 'EUR', timestamp: expect.any(String), orderId: 'o-2' });
    expect(report.body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });

    const onlyA = await api.request('GET', `/analytics/conversions?linkId=${a}&event=purchase`, { key: tenant.key });
    expect(onlyA.body.data.summary).toMatchObject({ totalConversions: 1, totalRevenue: 100, conversionRate: 12.5 });
    const page2 = await api.request('GET', '/analytics/conversions?limit=2&page=2', { key: tenant.key });
    expect(page2.body.data.conversions).toHaveLength(1);

    const overview = await api.request('GET', `/analytics?from=${day}&to=${day}`, { key: tenant.key });
    expect(overview.body.data.summary).toEqual({ totalClicks: 10, uniqueClicks: 8, conversions: 3, revenue, conversionRate: 30 });
    expect(overview.body.data.timeSeries).toEqual([{ date: day, clicks: 10, uniqueClicks: 8, conversions: 3 }]);
    expect(overview.body.data.topLinks.map((l: { linkId: string; conversions: number }) => [l.linkId, l.conversions])).toEqual([[a, 2], [b, 1]]);

    const linkA = await api.request('GET', `/links/${a}`, { key: tenant.key });
    expect(linkA.body.data).toMatchObject({ clicks: 8, conversions: 2, revenue: 100 });

    for (const q of ['event=refund', 'from=2026-02-30', `from=${day}&to=2020-01-01`, 'limit=0', 'channel=x']) {
      const bad = await api.request('GET', `/analytics/conversions?${q}`, { key: tenant.key });
      expect(bad.status, q).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('pixel conversions: one click and event stored twice (after the bus forgot the first) count once; a click counts at most 10 pixel conversions; s2s ones are not limited', async () => {
    const tenant = await api.tenant();
    const newLink = async (trackingType: string) =>
      (await api.request('POST', '/links', { key: tenant.key, body: { destinationUrl: 'https://shop.example/p', conversionTracking: true, trackingType } })).body.data.id as string;
    const [pixelLink, s2sLink] = [await newLink('pixel'), await newLink('s2s')];
    const noon = Math.floor(Date.now() / DAY) * DAY - DAY + 12 * 3_600_000;
    const day = new Date(noon).toISOString().slice(0, 10);
    const click = createClickId(secret, pixelLink, noon);
    const s2sClick = createClickId(secret, s2sLink, noon);
    const row = (over: Record<string, unknown>) => ({
      workspace_id: tenant.workspaceId, link_id: pixelLink, campaign_id: 'c', click_id: click, event: 'purchase', value: 1, currency: 'USD',
      order_id: '', attributed: true, source: 'pixel', ...over,
    });
    const rows = [
      // The same click and event without an orderId, from two redirectors 20 minutes apart: one conversion id.
      row({ conversion_id: pixelConversionId(click, 'purchase'), ts: noon + 60_000, value: 500 }),
      row({ conversion_id: pixelConversionId(click, 'purchase'), ts: noon + 21 * 60_000, value: 500 }),
      row({ conversion_id: pixelConversionId(click, 'signup'), ts: noon + 2 * 60_000, event: 'signup', value: 0 }),
      // 12 orders on the same click: 10 count (the earliest; the signup above is one of them).
      ...Array.from({ length: 12 }, (_, i) => row({ conversion_id: `conv_order${i}`, ts: noon + (3 + i) * 60_000, order_id: `o-${i}`, value: 10 })),
      // s2s conversions come with an API key: 12 orders on one click all count.
      ...Array.from({ length: 12 }, (_, i) => row({ conversion_id: `conv_s2s${i}`, link_id: s2sLink, click_id: s2sClick, ts: noon + i * 60_000, order_id: `s-${i}`, value: 1, source: 's2s' })),
    ];
    await clickhouse.insert({ table: 'conversions', values: rows, format: 'JSONEachRow' });

    // The purchase (500), the signup and 8 of the orders (10 each): 10 pixel conversions.
    const pixelReport = await api.request('GET', `/analytics/conversions?from=${day}&to=${day}&linkId=${pixelLink}&limit=100`, { key: tenant.key });
    expect(pixelReport.body.data.summary).toMatchObject({ totalConversions: 10, totalRevenue: 580 });
    expect(pixelReport.body.data.conversions.map((c: { orderId: string }) => c.orderId).filter(Boolean).sort()).toEqual(['o-0', 'o-1', 'o-2', 'o-3', 'o-4', 'o-5', 'o-6', 'o-7']);
    expect(pixelReport.body.data.byEvent).toMatchObject({ purchase: 9, signup: 1 });
    const s2sReport = await api.request('GET', `/analytics/conversions?from=${day}&to=${day}&linkId=${s2sLink}`, { key: tenant.key });
    expect(s2sReport.body.data.summary).toMatchObject({ totalConversions: 12, totalRevenue: 12 });
    const overview = await api.request('GET', `/analytics?from=${day}&to=${day}`, { key: tenant.key });
    expect(overview.body.data.summary).toMatchObject({ conversions: 22, revenue: 592 });
    expect((await api.request('GET', `/links/${pixelLink}`, { key: tenant.key })).body.data).toMatchObject({ conversions: 10, revenue: 580 });
    expect((await api.request('GET', `/links/${s2sLink}`, { key: tenant.key })).body.data).toMatchObject({ conversions: 12, revenue: 12 });
    const breakdown = await api.request('GET', `/analytics/breakdown?dimension=country&from=${day}&to=${day}`, { key: tenant.key });
    expect(breakdown.status).toBe(200);
  });

  it('a public pixel fired first with an order id cannot stand in for the s2s conversion of that order: the authenticated one counts', async () => {
    const tenant = await api.tenant();
    const link = (await api.request('POST', '/links', { key: tenant.key, body: { destinationUrl: 'https://shop.example/o', conversionTracking: true } })).body.data.id as string;
    const noon = Math.floor(Date.now() / DAY) * DAY - DAY + 12 * 3_600_000;
    const day = new Date(noon).toISOString().slice(0, 10);
    const row = (over: Record<string, unknown>) => ({
      workspace_id: tenant.workspaceId, link_id: link, campaign_id: 'c', click_id: createClickId(secret, link, noon), event: 'purchase', value: 1, currency: 'EUR',
      order_id: '', attributed: true, source: 'pixel', ...over,
    });
    await clickhouse.insert({
      table: 'conversions',
      format: 'JSONEachRow',
      values: [
        // Someone's pixel with a guessed order id and a cent, an hour before the merchant's postback of that order.
        row({ conversion_id: 'conv_forged', ts: noon, order_id: 'ORD-1001', value: 0.01 }),
        row({ conversion_id: 'conv_real', ts: noon + 3_600_000, order_id: 'ORD-1001', value: 499, source: 's2s' }),
        // A pixel order no postback reports still counts, and its repeats fold as before.
        row({ conversion_id: 'conv_px1', ts: noon + 60_000, order_id: 'ORD-2002', value: 20 }),
        row({ conversion_id: 'conv_px2', ts: noon + 120_000, order_id: 'ORD-2002', value: 20 }),
      ],
    });
    const report = await api.request('GET', `/analytics/conversions?from=${day}&to=${day}&linkId=${link}`, { key: tenant.key });
    expect(report.body.data.summary).toMatchObject({ totalConversions: 2, totalRevenue: 519 });
    expect(report.body.data.conversions.map((c: { conversionId: string }) => c.conversionId).sort()).toEqual(['conv_px1', 'conv_real']);
    expect((await api.request('GET', `/links/${link}`, { key: tenant.key })).body.data).toMatchObject({ conversions: 2, revenue: 519 });
    expect((await api.request('GET', `/analytics?from=${day}&to=${day}`, { key: tenant.key })).body.data.summary).toMatchObject({ conversions: 2, revenue: 519 });
  });

  it('an order counts on the link and event of its counted row alone: its other copies (a pixel on another link, under another event) count nowhere, narrowed reports included', async () => {
    const tenant = await api.tenant();
    const newLink = async (path: string) => (await api.request('POST', '/links', { key: tenant.key, body: { destinationUrl: `https://shop.example/${path}`, conversionTracking: true } })).body.data.id as string;
    const [a, b] = [await newLink('a'), await newLink('b')];
    const noon = Math.floor(Date.now() / DAY) * DAY - DAY + 12 * 3_600_000;
    const day = new Date(noon).toISOString().slice(0, 10);
    const row = (link: string, over: Record<string, unknown>) => ({
      workspace_id: tenant.workspaceId, link_id: link, campaign_id: 'c', click_id: createClickId(secret, link, noon), event: 'purchase', value: 1, currency: 'EUR',
      attributed: true, source: 'pixel', ...over,
    });
    await clickhouse.insert({
      table: 'conversions',
      format: 'JSONEachRow',
      values: [
        // A pixel on link a with the order id of link b's postback: the postback is the order.
        row(a, { conversion_id: 'conv_a_copy', ts: noon, order_id: 'ORD-3003', value: 1 }),
        row(b, { conversion_id: 'conv_b_order', ts: noon + 3_600_000, order_id: 'ORD-3003', value: 300, source: 's2s' }),
        // Two pixels of one order: the first (a signup on a) is the order; b's later purchase is its copy.
        row(a, { conversion_id: 'conv_a_signup', ts: noon + 60_000, order_id: 'ORD-4004', value: 5, event: 'signup' }),
        row(b, { conversion_id: 'conv_b_copy', ts: noon + 120_000, order_id: 'ORD-4004', value: 7 }),
      ],
    });
    const report = async (query: string) => (await api.request('GET', `/analytics/conversions?from=${day}&to=${day}&${query}`, { key: tenant.key })).body.data;
    const ofLink = async (link: string) => report(`linkId=${link}`);
    expect((await ofLink(a)).summary).toMatchObject({ totalConversions: 1, totalRevenue: 5 });
    expect((await ofLink(a)).conversions.map((c: { conversionId: string }) => c.conversionId)).toEqual(['conv_a_signup']);
    expect((await ofLink(b)).summary).toMatchObject({ totalConversions: 1, totalRevenue: 300 });
    expect((await report('event=purchase')).conversions.map((c: { conversionId: string }) => c.conversionId)).toEqual(['conv_b_order']);
    expect((await report(`event=purchase&linkId=${b}`)).summary).toMatchObject({ totalConversions: 1, totalRevenue: 300 });
    expect((await report('')).summary).toMatchObject({ totalConversions: 2, totalRevenue: 305 });
    // The link reports and the links' counters agree with the workspace's: 1 + 1 = 2.
    for (const [link, revenue] of [[a, 5], [b, 300]] as const) {
      expect((await api.request('GET', `/analytics/${link}?from=${day}&to=${day}`, { key: tenant.key })).body.data.summary).toMatchObject({ conversions: 1, revenue });
      expect((await api.request('GET', `/links/${link}`, { key: tenant.key })).body.data).toMatchObject({ conversions: 1, revenue });
    }
  });
});

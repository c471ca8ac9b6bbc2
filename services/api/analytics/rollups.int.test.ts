import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { createClickId } from '../../../shared/click-id.ts';

/** Every rollup the analytics read, each as a canonical, merged listing (order-independent of parts and merges). */
const listings: Record<string, string> = {
  link_hourly: `SELECT workspace_id, link_id, hour, campaign_id, kind, bot, source, country, device_class, sum(events) AS n, uniqExactMerge(visitors) AS u
    FROM link_hourly GROUP BY ALL ORDER BY ALL`,
  overview_clicks: `SELECT workspace_id, scope, campaign_id, source, bot, period, start, sum(clicks) AS n, uniqCombined64Merge(12)(visitors) AS u,
    sumMap(countries) AS c, sumMap(devices) AS d FROM overview_clicks GROUP BY ALL ORDER BY ALL`,
  overview_link_clicks: `SELECT workspace_id, source, bot, period, start, campaign_id, link_id, sumMap(clicks) AS c FROM overview_link_clicks GROUP BY ALL ORDER BY ALL`,
  dimension_daily: `SELECT workspace_id, dimension, value, day, sum(clicks) AS n, uniqCombined64Merge(12)(visitors) AS u FROM dimension_daily GROUP BY ALL ORDER BY ALL`,
  // One row per converted click, however many times it was written.
  converted_clicks: `SELECT DISTINCT * FROM converted_clicks ORDER BY ALL`,
};
/** The tables 0005 fills from events stored before it. */
const NEW_TABLES = ['overview_clicks', 'overview_link_clicks'];

/** Attributed conversions of every 7th click of `batch`, minutes after it. */
function conversionsOf(batch: ReturnType<typeof events>) {
  return batch
    .filter((e, i) => e.kind === 'click' && i % 7 === 0)
    .map((e, i) => ({
      workspace_id: e.workspace_id, link_id: e.link_id, ts: e.ts + 300_000, conversion_id: `conv_${e.click_id}`, click_id: e.click_id, campaign_id: e.campaign_id,
      event: 'purchase', value: 1 + i, currency: 'EUR', order_id: '', attributed: true, source: 's2s',
    }));
}

/** Events over three days from `startIso`. */
function events(workspaceId: string, count: number, seed: number, startIso = '2026-06-10T00:00:00Z') {
  return Array.from({ length: count }, (_, i) => ({
    workspace_id: workspaceId, link_id: `link_${i % 5}`, ts: Date.parse(startIso) + ((i * 7919 + seed) % (3 * 86_400)) * 1000,
    click_id: `ck_${seed}_${i}`, kind: i % 9 === 0 ? 'impression' : 'click', campaign_id: i % 5 < 2 ? 'campaign_a' : '', visitor_id: `v${(i * 31) % 40}`,
    country: ['US', 'DE', ''][i % 3], device_class: ['mobile', 'desktop', 'tablet'][i % 3], os: '', browser: ['Chrome', ''][i % 2], referrer_host: '', utm_source: ['a', 'b', ''][i % 3],
    utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: i % 4 === 0 ? 'qr' : 'link', rule_id: i % 6 === 0 ? 'rule_x' : '', destination: `https://example.com/${i % 3}`, bot: i % 13 === 0,
  }));
}

describe('analytics rollups (clickhouse/0002, 0005, 0010, 0011)', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await ch?.close();
  });

  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(listings).map(async ([table, query]) => [table, await (await client.query({ query, format: 'JSONEachRow' })).json()] as const)),
    );

  it('an insert retried with the same deduplication token is counted once in every rollup', async () => {
    const batch = events('ws_dedup', 300, 1);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-1' } });
    await client.insert({ table: 'conversions', values: conversionsOf(batch), format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'conv-1' } });
    const once = await snapshot();
    expect(once.overview_clicks!.length).toBeGreaterThan(0);
    expect(once.dimension_daily!.length).toBeGreaterThan(0);
    expect(once.converted_clicks!.length).toBeGreaterThan(0);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-1' } });
    await client.insert({ table: 'conversions', values: conversionsOf(batch), format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'conv-1' } });
    expect(await snapshot()).toEqual(once);
    // A new batch does count.
    await client.insert({ table: 'events', values: events('ws_dedup', 10, 2), format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-2' } });
    expect(await snapshot()).not.toEqual(once);
  });

  it('so is one across a month boundary, whose rows go to two partitions of each rollup', async () => {
    const batch = events('ws_dedup_months', 300, 5, '2026-06-29T00:00:00Z');
    expect(new Set(batch.map((e) => new Date(e.ts).toISOString().slice(0, 7)))).toEqual(new Set(['2026-06', '2026-07']));
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'months-1' } });
    const once = await snapshot();
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'months-1' } });
    expect(await snapshot()).toEqual(once);
  });

  it('dimension_daily holds each dimension\'s non-bot clicks per value and UTC day, and a visitor sketch', async () => {
    const batch = events('ws_dims', 400, 6);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow' });
    const rows = await (await client.query({ query: `SELECT dimension, value, toString(day) AS day, sum(clicks) AS n, uniqCombined64Merge(12)(visitors) AS u FROM dimension_daily WHERE workspace_id = 'ws_dims' GROUP BY ALL ORDER BY ALL`, format: 'JSONEachRow' })).json<{ dimension: string; value: string; day: string; n: number; u: number }>();
    const columns: Record<string, string> = { country: 'country', device: 'device_class', browser: 'browser', utm_source: 'utm_source', source: 'source', link: 'link_id', campaign: 'campaign_id', rule: 'rule_id', destination: 'destination', region: 'region', city: 'city' };
    const clicks = batch.filter((e) => e.kind === 'click' && !e.bot);
    for (const [dimension, column] of Object.entries(columns)) {
      const want = new Map<string, { n: number; v: Set<string> }>();
      for (const e of clicks) {
        const key = `${(e as Record<string, unknown>)[column] ?? ''}|${new Date(e.ts).toISOString().slice(0, 10)}`;
        const w = want.get(key) ?? want.set(key, { n: 0, v: new Set() }).get(key)!;
        w.n++;
        w.v.add(e.visitor_id);
      }
      const byKey = (x: Array<string | number>, y: Array<string | number>) => (x[0]! < y[0]! ? -1 : 1);
      const got = rows.filter((r) => r.dimension === dimension).map((r) => [`${r.value}|${r.day}`, Number(r.n), Number(r.u)]);
      expect(got.sort(byKey), dimension).toEqual([...want].map(([k, w]) => [k, w.n, w.v.size]).sort(byKey));
    }
    expect(new Set(rows.map((r) => r.dimension)).size).toBe(17);
  });

  it('converted_clicks: a converted click is found whether its conversion is stored after it or before it', async () => {
    const batch = events('ws_conv_order', 200, 7);
    const conversions = conversionsOf(batch);
    const [early, late] = [conversions.slice(0, 10), conversions.slice(10)];
    // Some conversions reach ClickHouse before their clicks (a backlog drained out of order), the rest after.
    await client.insert({ table: 'conversions', values: early, format: 'JSONEachRow' });
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow' });
    await client.insert({ table: 'conversions', values: late, format: 'JSONEachRow' });
    // An unattributed conversion's click is not needed; nor is a click id never stored.
    const clickOf = new Map(batch.map((e) => [e.click_id, e]));
    const stray = { ...conversions[0]!, conversion_id: 'conv_stray', click_id: 'ck_never_stored' };
    const unattributed = { ...conversions[0]!, conversion_id: 'conv_unattributed', click_id: batch.find((e) => e.kind === 'click' && !conversions.some((c) => c.click_id === e.click_id))!.click_id, attributed: false };
    await client.insert({ table: 'conversions', values: [stray, unattributed], format: 'JSONEachRow' });
    const rows = await (await client.query({ query: `SELECT DISTINCT link_id, toString(click) AS click, toUnixTimestamp(ts) AS t, country FROM converted_clicks WHERE workspace_id = 'ws_conv_order' ORDER BY click`, format: 'JSONEachRow' })).json<{ link_id: string; click: string; t: number; country: string }>();
    const hashes = await (await client.query({ query: `SELECT click_id, toString(cityHash64(click_id)) AS h FROM (SELECT arrayJoin({ids:Array(String)}) AS click_id)`, query_params: { ids: conversions.map((c) => c.click_id) }, format: 'JSONEachRow' })).json<{ click_id: string; h: string }>();
    expect(rows.map((r) => String(r.click)).sort()).toEqual(hashes.map((h) => h.h).sort());
    for (const h of hashes) {
      const row = rows.find((r) => String(r.click) === h.h)!;
      expect({ link_id: row.link_id, t: Number(row.t), country: row.country }).toEqual({ link_id: clickOf.get(h.click_id)!.link_id, t: Math.floor(clickOf.get(h.click_id)!.ts / 1000), country: clickOf.get(h.click_id)!.country });
    }
  });

  it('converted_clicks: a conversion finds its click by the time its click id carries (ids as the redirector makes them)', async () => {
    const secret = Buffer.from('rollups-test-secret');
    const linkId = `link_${'R'.repeat(22)}`;
    const batch = events('ws_conv_ids', 120, 11).map((e) => ({ ...e, link_id: linkId, click_id: createClickId(secret, linkId, e.ts) }));
    // A second click of the same link in the same second: the key finds both, the click id tells them apart.
    batch.push({ ...batch[1]!, click_id: createClickId(secret, linkId, batch[1]!.ts), visitor_id: 'v_twin', kind: 'click' });
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow' });
    const conversions = conversionsOf(batch);
    expect(conversions.length).toBeGreaterThan(5);
    await client.insert({ table: 'conversions', values: conversions, format: 'JSONEachRow' });
    const rows = await (await client.query({ query: `SELECT DISTINCT toString(click) AS click FROM converted_clicks WHERE workspace_id = 'ws_conv_ids'`, format: 'JSONEachRow' })).json<{ click: string }>();
    const hashes = await (await client.query({ query: `SELECT toString(cityHash64(arrayJoin({ids:Array(String)}))) AS h`, query_params: { ids: conversions.map((c) => c.click_id) }, format: 'JSONEachRow' })).json<{ h: string }>();
    expect(rows.map((r) => r.click).sort()).toEqual(hashes.map((h) => h.h).sort());
  });

  it('0010 and 0011 fill their tables from clicks and conversions stored before them, once', async () => {
    const batch = events('ws_backfill_dims', 300, 8);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow' });
    await client.insert({ table: 'conversions', values: conversionsOf(batch), format: 'JSONEachRow' });
    const fromViews = await snapshot();
    const versions = ['0010_dimension_daily', '0011_converted_clicks'];
    for (const view of ['dimension_daily_mv', 'converted_clicks_by_conversion_mv', 'converted_clicks_by_click_mv']) await client.command({ query: `DROP VIEW IF EXISTS ${view}` });
    for (const table of ['dimension_daily', 'converted_clicks']) await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
    const forget = () => client.command({ query: `DELETE FROM schema_migrations WHERE version IN ({versions:Array(String)})`, query_params: { versions } });
    await forget();
    expect(await migrateClickHouse(client)).toEqual(versions);
    expect(await snapshot()).toEqual(fromViews);
    await forget();
    expect(await migrateClickHouse(client)).toEqual(versions);
    expect(await snapshot()).toEqual(fromViews);
    // The views are back.
    const more = events('ws_backfill_dims', 50, 9);
    await client.insert({ table: 'events', values: more, format: 'JSONEachRow' });
    await client.insert({ table: 'conversions', values: conversionsOf(more), format: 'JSONEachRow' });
    const after = await snapshot();
    expect(after.dimension_daily).not.toEqual(fromViews.dimension_daily);
    expect(after.converted_clicks!.length).toBeGreaterThan(fromViews.converted_clicks!.length);
  });

  it('0005 replaces the 0004 tables: none of them, nor their views, is left', async () => {
    const tables = await (await client.query({ query: `SELECT name FROM system.tables WHERE database = currentDatabase()`, format: 'JSONEachRow' })).json<{ name: string }>();
    const names = tables.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['overview_clicks', 'overview_clicks_mv', 'overview_link_clicks', 'overview_link_clicks_mv']));
    for (const gone of ['workspace_clicks', 'workspace_clicks_mv', 'link_clicks', 'link_clicks_mv']) expect(names).not.toContain(gone);
  });

  it('0005 fills its tables from events stored before it, once: a re-run copies nothing again', async () => {
    await client.insert({ table: 'events', values: events('ws_backfill', 500, 3), format: 'JSONEachRow' });
    const fromViews = await snapshot();
    // Back to the state before 0005: its tables gone, its record too.
    for (const table of NEW_TABLES) {
      await client.command({ query: `DROP VIEW IF EXISTS ${table}_mv` });
      await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
    }
    const forget = () => client.command({ query: `DELETE FROM schema_migrations WHERE version = '0005_overview_rollups'` });
    await forget();
    expect(await migrateClickHouse(client)).toEqual(['0005_overview_rollups']);
    expect(await snapshot()).toEqual(fromViews);
    // A second instance that did not see the record runs the file again: the tables are not empty, nothing is copied.
    await forget();
    expect(await migrateClickHouse(client)).toEqual(['0005_overview_rollups']);
    expect(await snapshot()).toEqual(fromViews);
    // And the views are back: new events reach the tables.
    await client.insert({ table: 'events', values: events('ws_backfill', 5, 4), format: 'JSONEachRow' });
    expect((await snapshot()).overview_clicks).not.toEqual(fromViews.overview_clicks);
    expect((await snapshot()).overview_link_clicks).not.toEqual(fromViews.overview_link_clicks);
  });
});

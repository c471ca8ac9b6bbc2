import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';

/** Every rollup the analytics read, each as a canonical, merged listing (order-independent of parts and merges). */
const listings: Record<string, string> = {
  link_hourly: `SELECT workspace_id, link_id, hour, campaign_id, kind, bot, source, country, device_class, sum(events) AS n, uniqExactMerge(visitors) AS u
    FROM link_hourly GROUP BY ALL ORDER BY ALL`,
  overview_clicks: `SELECT workspace_id, scope, campaign_id, source, bot, period, start, sum(clicks) AS n, uniqCombined64Merge(12)(visitors) AS u,
    sumMap(countries) AS c, sumMap(devices) AS d FROM overview_clicks GROUP BY ALL ORDER BY ALL`,
  overview_link_clicks: `SELECT workspace_id, source, bot, period, start, campaign_id, link_id, sumMap(clicks) AS c FROM overview_link_clicks GROUP BY ALL ORDER BY ALL`,
};
/** The tables 0005 fills from events stored before it. */
const NEW_TABLES = ['overview_clicks', 'overview_link_clicks'];

/** Events over three days from `startIso`. */
function events(workspaceId: string, count: number, seed: number, startIso = '2026-06-10T00:00:00Z') {
  return Array.from({ length: count }, (_, i) => ({
    workspace_id: workspaceId, link_id: `link_${i % 5}`, ts: Date.parse(startIso) + ((i * 7919 + seed) % (3 * 86_400)) * 1000,
    click_id: `ck_${seed}_${i}`, kind: i % 9 === 0 ? 'impression' : 'click', campaign_id: i % 5 < 2 ? 'campaign_a' : '', visitor_id: `v${(i * 31) % 40}`,
    country: ['US', 'DE', ''][i % 3], device_class: ['mobile', 'desktop', 'tablet'][i % 3], os: '', browser: '', referrer_host: '', utm_source: '',
    utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: i % 4 === 0 ? 'qr' : 'link', rule_id: '', destination: '', bot: i % 13 === 0,
  }));
}

describe('analytics rollups (clickhouse/0002, 0005)', () => {
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
    const once = await snapshot();
    expect(once.overview_clicks!.length).toBeGreaterThan(0);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-1' } });
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

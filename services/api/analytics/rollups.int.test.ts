import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from '../../../shared/clickhouse/embedded-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';

/** Every rollup the analytics read, each as a canonical, merged listing (order-independent of parts and merges). */
const listings: Record<string, string> = {
  link_hourly: `SELECT workspace_id, link_id, hour, campaign_id, kind, bot, source, country, device_class, sum(events) AS n, uniqExactMerge(visitors) AS u
    FROM link_hourly GROUP BY ALL ORDER BY ALL`,
  workspace_clicks: `SELECT workspace_id, scope, campaign_id, source, bot, period, start, sum(clicks) AS n, uniqCombined64Merge(12)(visitors) AS u,
    sumMap(countries) AS c, sumMap(devices) AS d FROM workspace_clicks GROUP BY ALL ORDER BY ALL`,
  link_clicks: `SELECT workspace_id, source, bot, period, start, campaign_id, link_id, sumMap(clicks) AS c FROM link_clicks GROUP BY ALL ORDER BY ALL`,
};
const NEW_TABLES = ['workspace_clicks', 'link_clicks'];

function events(workspaceId: string, count: number, seed: number) {
  return Array.from({ length: count }, (_, i) => ({
    workspace_id: workspaceId, link_id: `link_${i % 5}`, ts: Date.parse('2026-06-10T00:00:00Z') + ((i * 7919 + seed) % (3 * 86_400)) * 1000,
    click_id: `ck_${seed}_${i}`, kind: i % 9 === 0 ? 'impression' : 'click', campaign_id: i % 5 < 2 ? 'campaign_a' : '', visitor_id: `v${(i * 31) % 40}`,
    country: ['US', 'DE', ''][i % 3], device_class: ['mobile', 'desktop', 'tablet'][i % 3], os: '', browser: '', referrer_host: '', utm_source: '',
    utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: i % 4 === 0 ? 'qr' : 'link', rule_id: '', destination: '', bot: i % 13 === 0,
  }));
}

describe('analytics rollups (clickhouse/0002, 0004)', () => {
  let ch: EmbeddedClickHouse;
  let client: ClickHouseClient;

  beforeAll(async () => {
    ch = await startEmbeddedClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await ch?.stop();
  });

  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(listings).map(async ([table, query]) => [table, await (await client.query({ query, format: 'JSONEachRow' })).json()] as const)),
    );

  it('an insert retried with the same deduplication token is counted once in every rollup', async () => {
    const batch = events('ws_dedup', 300, 1);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-1' } });
    const once = await snapshot();
    expect(once.workspace_clicks!.length).toBeGreaterThan(0);
    await client.insert({ table: 'events', values: batch, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-1' } });
    expect(await snapshot()).toEqual(once);
    // A new batch does count.
    await client.insert({ table: 'events', values: events('ws_dedup', 10, 2), format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: 'batch-2' } });
    expect(await snapshot()).not.toEqual(once);
  });

  it('0004 fills its tables from events stored before it, once: a re-run copies nothing again', async () => {
    await client.insert({ table: 'events', values: events('ws_backfill', 500, 3), format: 'JSONEachRow' });
    const fromViews = await snapshot();
    // Back to the state before 0004: its tables gone, its record too.
    for (const table of NEW_TABLES) {
      await client.command({ query: `DROP VIEW IF EXISTS ${table}_mv` });
      await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
    }
    const forget = () => client.command({ query: `DELETE FROM schema_migrations WHERE version = '0004_workspace_rollups'` });
    await forget();
    expect(await migrateClickHouse(client)).toEqual(['0004_workspace_rollups']);
    expect(await snapshot()).toEqual(fromViews);
    // A second instance that did not see the record runs the file again: the tables are not empty, nothing is copied.
    await forget();
    expect(await migrateClickHouse(client)).toEqual(['0004_workspace_rollups']);
    expect(await snapshot()).toEqual(fromViews);
    // And the views are back: new events reach the tables.
    await client.insert({ table: 'events', values: events('ws_backfill', 5, 4), format: 'JSONEachRow' });
    expect((await snapshot()).workspace_clicks).not.toEqual(fromViews.workspace_clicks);
  });
});

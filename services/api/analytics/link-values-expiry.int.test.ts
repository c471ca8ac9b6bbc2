import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';
import { LinkValueStore } from './link-values.ts';

/**
 * A tag snapshot whose rows expired (7 days' TTL: nobody asked for tag analytics for a
 * week) is written again when next asked for, and counts the clicks under the tags again.
 */
describe('link values snapshot after its rows expired', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  it('writes it again, and the tag breakdown and tag filter count the clicks under the tags', async () => {
    const t = await api.tenant();
    const link = (await api.request('POST', '/links', { key: t.key, body: { destinationUrl: 'https://example.com/t', tags: ['a'] } })).body.data;
    const ts = Date.parse('2026-03-03T12:00:00Z');
    await client.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: Array.from({ length: 5 }, (_, i) => ({
        workspace_id: t.workspaceId, link_id: link.id, ts: ts + i * 1000, click_id: `ck_ttl_${i}`, kind: 'click', campaign_id: link.campaignId,
        visitor_id: `v${i}`, country: 'DE', device_class: 'mobile', source: 'link', bot: false,
      })),
    });
    const rows = async () =>
      Number(
        (await (await client.query({ query: 'SELECT count() AS n FROM link_values WHERE workspace_id = {w:String}', query_params: { w: t.workspaceId }, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n,
      );
    const breakdown = async () =>
      (await api.request('GET', '/analytics/breakdown?dimension=tag&from=2026-03-01&to=2026-03-07', { key: t.key })).body.data.map((r: { value: string | null; clicks: number }) => [r.value, r.clicks]);
    const tagged = async () => (await api.request('GET', '/analytics?from=2026-03-01&to=2026-03-07&tag=a', { key: t.key })).body.data.summary.totalClicks;
    expect(await breakdown()).toEqual([['a', 5]]);
    expect(await rows()).toBe(2); // the link's row and the snapshot's marker

    // A week on: the TTL takes the rows (written_at set back, then merged).
    await client.command({ query: 'ALTER TABLE link_values UPDATE written_at = now() - INTERVAL 8 DAY WHERE workspace_id = {w:String} SETTINGS mutations_sync = 2', query_params: { w: t.workspaceId } });
    await client.command({ query: 'OPTIMIZE TABLE link_values FINAL' });
    expect(await rows()).toBe(0);

    // A fresh instance's store (nothing remembered in memory), as after a restart or on another instance, a week on.
    await new LinkValueStore(client, api.db.sql, () => Date.now() + 8 * 86_400_000).snapshots(t.workspaceId, ['tag']);
    // Before: the write repeated the first one's token and ClickHouse dropped it: 0 rows, every click under (none), tag=a matching none.
    expect(await rows()).toBe(2);
    expect(await tagged()).toBe(5);
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { analyticsOverviewSchema, breakdownRowSchema, realtimeSchema } from '../../../shared/schemas/analytics.ts';
import { queryRows } from './query-rows.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';

/**
 * Workspace-wide unique visitors are a sketch's estimate (uniqCombined64(12), ~1.5 %
 * beyond 128 visitors), which may land above the true count. Here every click is a new
 * visitor, with visitor ids chosen so that the sketch overestimates them, both as the
 * overview rollups hash them (the String) and as click_facts does (cityHash64): the
 * answers must still never claim more unique visitors than clicks.
 */

const VISITORS = 600;
const DAY = '2026-03-10';

describe('unique visitors against a sketch that overestimates', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let prefix = '';

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    a = await api.tenant();
    const link = (await api.request('POST', '/links', { key: a.key, body: { destinationUrl: 'https://example.com/u' } })).body.data;

    // The first id prefix whose VISITORS distinct ids both estimates put above VISITORS.
    for (let i = 0; i < 200 && prefix === ''; i++) {
      const [row] = await queryRows<{ s: number | string; h: number | string }>(
        client,
        `SELECT uniqCombined64(12)(v) AS s, uniqCombined64(12)(cityHash64(v)) AS h FROM (SELECT concat({p:String}, toString(number)) AS v FROM numbers({n:UInt32}))`,
        { p: `uv${i}_`, n: VISITORS },
      );
      if (Number(row!.s) > VISITORS && Number(row!.h) > VISITORS) prefix = `uv${i}_`;
    }
    expect(prefix, 'a prefix the sketch overestimates').not.toBe('');

    const dayStart = Date.parse(`${DAY}T00:00:00Z`);
    const recent = Date.now() - 10 * 60_000;
    const click = (n: number, ts: number, tag: string) => ({
      workspace_id: a.workspaceId, link_id: link.id, campaign_id: link.campaignId ?? '', ts, click_id: `ck_${tag}_${n}`, kind: 'click',
      visitor_id: `${prefix}${n}`, country: 'DE', device_class: 'mobile', source: 'link', destination: 'https://example.com/u', bot: false,
    });
    const values = [
      ...Array.from({ length: VISITORS }, (_, n) => click(n, dayStart + (n % 24) * 3_600_000 + n, 'day')),
      ...Array.from({ length: VISITORS }, (_, n) => click(n, recent, 'now')),
    ];
    await client.insert({ table: 'events', values, format: 'JSONEachRow' });
  }, 180_000);

  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  const get = async (path: string) => {
    const res = await api.request('GET', path, { key: a.key });
    expect(res.status, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    return res.body.data;
  };

  it('the overview (rollups, and click_facts under a filter) reports at most one visitor per click', async () => {
    for (const qs of [`from=${DAY}&to=${DAY}`, `from=${DAY}&to=${DAY}&granularity=hour`, `from=${DAY}&to=${DAY}&os=(none)`]) {
      const data = analyticsOverviewSchema.parse(await get(`/analytics?${qs}`));
      expect(data.summary.totalClicks, qs).toBe(VISITORS);
      expect(data.summary.uniqueClicks, qs).toBe(VISITORS);
      for (const b of data.timeSeries) expect(b.uniqueClicks, `${qs} ${b.date}`).toBeLessThanOrEqual(b.clicks);
    }
  });

  it('breakdown rows report at most one visitor per click', async () => {
    for (const dimension of ['country', 'device', 'link', 'os']) {
      const rows = (await get(`/analytics/breakdown?dimension=${dimension}&from=${DAY}&to=${DAY}`)) as unknown[];
      expect(rows, dimension).toHaveLength(1);
      const row = breakdownRowSchema.parse(rows[0]);
      expect(row.clicks, dimension).toBe(VISITORS);
      expect(row.uniqueClicks, dimension).toBe(VISITORS);
    }
  });

  it('realtime reports at most one visitor per click, in the summary and per minute', async () => {
    const data = realtimeSchema.parse(await get('/analytics/realtime'));
    expect(data.summary).toEqual({ clicks: VISITORS, uniqueVisitors: VISITORS });
    expect(data.minutes.filter((m) => m.clicks > 0)).toEqual([expect.objectContaining({ clicks: VISITORS, uniqueVisitors: VISITORS })]);
  });
});

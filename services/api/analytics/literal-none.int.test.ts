import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import type { TestApi } from '../testing/api-harness.ts';
import { startAnalyticsTestApi, type AnalyticsTestApi } from '../testing/analytics-harness.ts';

/**
 * A value that is the text "(none)" itself (a GA-style utm_medium=(none) on a visitor's
 * link) is a breakdown row apart from the empty value's, and `\(none)` filters it on
 * every endpoint, as `(none)` filters the empty one. Fixed past dates.
 */
const FROM = '2026-05-01';
const TO = '2026-05-03';

describe('the text (none) as a filter value', () => {
  let env: AnalyticsTestApi;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };

  beforeAll(async () => {
    env = await startAnalyticsTestApi();
    ({ api, clickhouse: client } = env);
    a = await api.tenant();
    const link = (await api.request('POST', '/links', { key: a.key, body: { destinationUrl: 'https://example.com/' } })).body.data;
    const click = (n: number, utm_medium: string) => ({
      workspace_id: a.workspaceId, link_id: link.id, campaign_id: link.campaignId, kind: 'click', ts: Date.parse('2026-05-02T10:00:00Z') + n * 1_000,
      click_id: `ck_ln_${n}`, visitor_id: `v${n}`, country: 'DE', device_class: 'desktop', os: 'linux', source: 'link', rule_id: '', bot: false, utm_medium,
    });
    await client.insert({ table: 'events', values: [click(1, '(none)'), click(2, '(none)'), click(3, ''), click(4, 'email')], format: 'JSONEachRow' });
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  const get = async (path: string) => {
    const res = await api.request('GET', path, { key: a.key });
    expect(res.status, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    return res.body;
  };
  const range = `from=${FROM}&to=${TO}`;

  it('is its own breakdown row, beside the empty value\'s', async () => {
    const rows = (await get(`/analytics/breakdown?dimension=utm_medium&${range}`)).data;
    expect(rows.map((r: { value: string | null; clicks: number }) => [r.value, r.clicks])).toEqual([
      ['(none)', 2],
      [null, 1],
      ['email', 1],
    ]);
  });

  it.each([
    ['\\(none)', 2],
    ['(none)', 1],
    ['\\(none),(none)', 3],
    // As the dashboard writes it in its address (the backslash escaped).
    ['\\\\(none)', 2],
  ])('utm_medium=%s keeps %i clicks on the overview, the breakdown, the click log and realtime alike', async (value, clicks) => {
    const filter = `utm_medium=${encodeURIComponent(value)}`;
    expect((await get(`/analytics?${range}&${filter}`)).data.summary.totalClicks).toBe(clicks);
    const rows = (await get(`/analytics/breakdown?dimension=utm_medium&${range}&${filter}`)).data;
    expect(rows.reduce((n: number, r: { clicks: number }) => n + r.clicks, 0)).toBe(clicks);
    expect((await get(`/analytics/clicks?${range}&${filter}`)).pagination.total).toBe(clicks);
    // The last 60 minutes hold none of these days' clicks: the filter is taken, and answers none.
    expect((await get(`/analytics/realtime?${filter}`)).data.summary.clicks).toBe(0);
  });

  it('a dimension whose values cannot be the text (none) refuses it with a 400 naming the parameter', async () => {
    const res = await api.request('GET', `/analytics?${range}&country=${encodeURIComponent('\\(none)')}`, { key: a.key });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain('country');
  });
});

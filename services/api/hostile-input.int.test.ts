import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { rawHttp } from '../../shared/testing/raw-http.ts';

/** Inputs that once answered 500 (issue 14): each now a 400 in the envelope, and nothing stored. */
describe.each(backends)('hostile request bodies on %s', (backend) => {
  let api: TestApi;
  let key: string;
  let linkId: string;

  beforeAll(async () => {
    api = await startTestApi(backend);
    ({ key } = await api.tenant());
    linkId = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/h' } })).body.data.id;
  });
  afterAll(() => api?.close());

  it('JSON nested 10,000 deep is a 400 naming the depth limit, on every body route', async () => {
    // 20 KB of arrays (as reported) and 60 KB of objects.
    const arrays = `{"title":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const objects = '{"a":'.repeat(10_000) + '"x"' + '}'.repeat(10_000);
    for (const [method, path] of [['POST', '/links'], ['PATCH', `/links/${linkId}`], ['POST', '/campaigns'], ['POST', '/rules']] as const) {
      for (const deep of [arrays, objects]) {
        const res = await api.request(method, path, { key, rawBody: deep, headers: { 'content-type': 'application/json' } });
        expect(res.status, `${method} ${path}`).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.message).toMatch(/nested more than \d+ levels/);
      }
    }
    // A NUL beneath the limit is still found, with its path.
    const nul = await api.request('POST', '/links', { key, body: { destinationUrl: 'https://e.com', title: 'ok', x: [[{ y: 'a\u0000' }]] } });
    expect(nul.body.error.details).toEqual([{ path: 'x.0.0.y', message: expect.stringMatching(/NUL/) }]);
  });

  it('timestamps outside what the stores hold are 400s on create and update', async () => {
    for (const expiresAt of ['9999-12-31T23:59:59-14:00', '+275760-09-13T00:00:00Z', '10000-01-01T00:00:00Z', '1969-12-31T23:59:59Z']) {
      const created = await api.request('POST', '/links', { key, body: { destinationUrl: 'https://e.com', expiresAt } });
      expect(created.status, expiresAt).toBe(400);
      expect(created.body.error.details.map((d: { path: string }) => d.path), expiresAt).toContain('expiresAt');
      expect(new Set(created.body.error.details.map((d: { path: string }) => d.path)), expiresAt).toEqual(new Set(['expiresAt']));
      const patched = await api.request('PATCH', `/links/${linkId}`, { key, body: { expiresAt } });
      expect(patched.status, expiresAt).toBe(400);
      // In bulk, the item fails alone, naming the field.
      for (const [method, body] of [['POST', { links: [{ destinationUrl: 'https://e.com', expiresAt }] }], ['PATCH', { links: [{ id: linkId, patch: { expiresAt } }] }]] as const) {
        const bulk = await api.request(method, '/links/bulk', { key, body });
        expect(bulk.status, `${method} /links/bulk ${expiresAt}`).toBe(200);
        expect(bulk.body.data[0].error.code, `${method} /links/bulk ${expiresAt}`).toBe('VALIDATION_ERROR');
        expect(new Set(bulk.body.data[0].error.details.map((d: { path: string }) => d.path)), `${method} /links/bulk ${expiresAt}`).toEqual(new Set(['expiresAt']));
      }
    }
    const later = await api.request('PATCH', `/links/${linkId}`, { key, body: { expiresAt: '2999-12-31T23:59:59+14:00' } });
    expect(later.status).toBe(200);
    expect(later.body.data.expiresAt).toBe('2999-12-31T09:59:59.000Z');
  });

  it('an empty body says it is empty, with or without Content-Length', async () => {
    const url = new URL(api.url);
    for (const framing of [{ 'content-length': '0' }, {}, { 'transfer-encoding': 'chunked' }] as Array<Record<string, string>>) {
      const res = await rawHttp(url.port, {
        method: 'POST',
        path: '/links',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...framing },
        body: 'transfer-encoding' in framing ? '0\r\n\r\n' : '',
      });
      expect(res.status, JSON.stringify(framing)).toBe(400);
      expect(JSON.parse(res.body).error.message, JSON.stringify(framing)).toBe('Request body is empty; expected a JSON object');
    }
  });
});

/**
 * Requests Node's HTTP parser refuses before Koa sees them: they once got a bare
 * status line without a body (issue 14); now the envelope and the right status.
 */
describe('requests the HTTP parser refuses', () => {
  let api: TestApi;
  let port: string;

  beforeAll(async () => {
    api = await startTestApi('pglite');
    port = new URL(api.url).port;
  });
  afterAll(() => api?.close());

  const envelope = (body: string) => JSON.parse(body) as { success: boolean; error: { code: string; message: string } };

  it('oversized headers are a 431 REQUEST_HEADER_FIELDS_TOO_LARGE in the envelope', async () => {
    for (const size of [20_000, 70_000]) {
      const res = await rawHttp(port, { method: 'GET', path: '/links', headers: { 'x-big': 'a'.repeat(size) } });
      expect(res.status, `${size}`).toBe(431);
      expect(res.headers['content-type'], `${size}`).toMatch(/^application\/json/);
      expect(envelope(res.body), `${size}`).toEqual({ success: false, error: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: expect.stringMatching(/headers/i) } });
    }
    // Many small headers overflow as well.
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`x-h${i}`, 'v'.repeat(10)]));
    const res = await rawHttp(port, { method: 'GET', path: '/health', headers: many });
    expect(res.status).toBe(431);
    expect(envelope(res.body).error.code).toBe('REQUEST_HEADER_FIELDS_TOO_LARGE');
  });

  it('a malformed request line or header is a 400 BAD_REQUEST in the envelope', async () => {
    const malformed: Array<[string, Uint8Array]> = [
      ['invalid UTF-8 in the path', Buffer.from('GET /links/\xff\xfe HTTP/1.1\r\nhost: x\r\n\r\n', 'latin1')],
      ['a control character in the path', Buffer.from('GET /li\x01nks HTTP/1.1\r\nhost: x\r\n\r\n', 'latin1')],
      ['an unknown HTTP version', Buffer.from('GET /links HTTP/9.9\r\nhost: x\r\n\r\n', 'latin1')],
      ['a method with invalid characters', Buffer.from('G(T /links HTTP/1.1\r\nhost: x\r\n\r\n', 'latin1')],
      ['a header without a colon', Buffer.from('GET /links HTTP/1.1\r\nhost: x\r\nnonsense\r\n\r\n', 'latin1')],
      ['a header name with a space', Buffer.from('GET /links HTTP/1.1\r\nhost: x\r\nbad name: 1\r\n\r\n', 'latin1')],
      ['a bare LF in a header value', Buffer.from('GET /links HTTP/1.1\r\nhost: x\r\nx-a: 1\rx\r\n\r\n', 'latin1')],
      ['two Content-Length headers that disagree', Buffer.from('POST /links HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab', 'latin1')],
      ['Content-Length beside chunked', Buffer.from('POST /links HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n', 'latin1')],
      ['a bad chunk size', Buffer.from('POST /links HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 'latin1')],
      ['binary garbage', new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a])],
    ];
    for (const [label, bytes] of malformed) {
      const res = await rawHttp(port, bytes);
      expect(res.status, label).toBe(400);
      expect(res.headers['content-type'], label).toMatch(/^application\/json/);
      expect(envelope(res.body), label).toEqual({ success: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/^Malformed HTTP request/) } });
    }
  });

  it('what Node would answer on its own (no Host, an unmet Expect, CONNECT) is in the envelope too', async () => {
    const cases: Array<[string, Uint8Array, number, string]> = [
      ['no Host', Buffer.from('GET /links HTTP/1.1\r\n\r\n', 'latin1'), 400, 'BAD_REQUEST'],
      ['Expect: 200-ok', Buffer.from('POST /links HTTP/1.1\r\nhost: x\r\nexpect: 200-ok\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}', 'latin1'), 417, 'EXPECTATION_FAILED'],
      ['CONNECT', Buffer.from('CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n', 'latin1'), 405, 'METHOD_NOT_ALLOWED'],
    ];
    for (const [label, bytes, status, code] of cases) {
      const res = await rawHttp(port, bytes);
      expect(res.status, label).toBe(status);
      expect(envelope(res.body).error.code, label).toBe(code);
    }
    // HTTP/1.0 needs no Host.
    expect((await rawHttp(port, Buffer.from('GET /health HTTP/1.0\r\n\r\n', 'latin1'))).status).toBe(200);
  });

  it('the server keeps answering after refusing them', async () => {
    expect((await api.request('GET', '/health')).status).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp, type RouteTable } from './app.ts';
import { loadApiConfig } from './config.ts';
import { operations } from './openapi/operations.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

describe('OpenAPI document', () => {
  let api: TestApi;
  let document: { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: { 'application/json': { example?: unknown } } } }>> };

  beforeAll(async () => {
    api = await startTestApi('pglite');
    document = (await (await fetch(`${api.url}/openapi.json`)).json()) as typeof document;
  });
  afterAll(() => api?.close());

  it('is OpenAPI 3.1 and documents every route the router knows, and nothing else', async () => {
    expect(document.openapi).toBe('3.1.0');
    const app = createApiApp({ sql: api.db.sql, config: loadApiConfig({}), logger: createLogger('t', 'silent') });
    const table = (app.context as { routeTable?: RouteTable }).routeTable!;
    const routed = table.flatMap((r) => r.methods.filter((m) => m !== 'HEAD').map((m) => `${m.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`)).sort();
    const documented = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`)).sort();
    expect(routed.length).toBeGreaterThan(20);
    expect(documented).toEqual(routed);
  });

  it('no operation names a parameter twice (a path parameter is not also a query parameter)', () => {
    const ops = document.paths as unknown as Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
    for (const [path, methods] of Object.entries(ops)) {
      for (const [method, op] of Object.entries(methods)) {
        const names = (op.parameters ?? []).map((p) => p.name);
        expect(names.filter((n, i) => names.indexOf(n) !== i), `${method} ${path}`).toEqual([]);
      }
    }
    expect(ops['/analytics/experiments/{linkId}']!.get!.parameters!.filter((p) => p.name === 'linkId')).toEqual([expect.objectContaining({ in: 'path' })]);
  });

  it('every example request validates against the schema its route uses', () => {
    const withBodies = operations.filter((op) => op.body);
    expect(withBodies.length).toBeGreaterThan(5);
    for (const op of withBodies) {
      expect(op.example, `${op.method} ${op.path}`).toBeDefined();
      expect(op.body!.safeParse(op.example).success, `${op.method} ${op.path}`).toBe(true);
      expect(document.paths[op.path]![op.method]!.requestBody!.content['application/json'].example).toEqual(op.example);
    }
  });

  it('an example request is accepted by the running API', async () => {
    const { key } = await api.tenant();
    const link = operations.find((op) => op.method === 'post' && op.path === '/links')!;
    const res = await api.request('POST', '/links', { key, body: link.example });
    expect(res.status).toBe(201);
    expect(link.response.safeParse(res.body.data).success).toBe(true);
  });

  it('serves a readable reference page without a key', async () => {
    const res = await fetch(`${api.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('POST /rules');
    expect(html).toContain('GET /analytics/{linkId}');
    expect(html).toContain('GET /analytics/breakdown');
    expect(html).toContain('GET /analytics/experiments/{linkId}');
    expect(html).toContain('utm_source');
  });
});

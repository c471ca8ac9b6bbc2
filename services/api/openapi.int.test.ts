import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp, type RouteTable } from './app.ts';
import { loadApiConfig } from './config.ts';
import { componentExamples } from './openapi/examples.ts';
import { componentSchemas, responseExampleOf } from './openapi/openapi-document.ts';
import { operations } from './openapi/operations.ts';
import { takesIdempotencyKey } from './openapi/statuses.ts';

type Json = Record<string, any>;
import { startTestApi, type TestApi } from './testing/api-harness.ts';

describe('OpenAPI document', () => {
  let api: TestApi;
  let document: Json;

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
    const documented = Object.entries(document.paths as Record<string, Json>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`)).sort();
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

  it('every operation has an example answer, each valid against the schema its route answers with', () => {
    for (const op of operations) {
      const name = `${op.method} ${op.path}`;
      const example = responseExampleOf(op);
      expect(example, name).toBeDefined();
      const success = document.paths[op.path][op.method].responses[String(op.status)];
      const media = Object.values(success.content as Json).find((m: Json) => m.example !== undefined) as Json | undefined;
      expect(media, name).toBeDefined();
      if (op.mediaTypes) {
        expect(media!.example, name).toBe(example);
        continue;
      }
      expect(media!.example, name).toEqual({ success: true, data: example, ...(op.paginated ? { pagination: expect.any(Object) } : {}) });
      expect(op.response.safeParse(example).error, name).toBeUndefined();
    }
    for (const [path, methods] of Object.entries(document.paths as Json)) {
      for (const [method, op] of Object.entries(methods as Json)) {
        for (const param of op.parameters as Json[]) if (param.in === 'path') expect(param.example, `${method} ${path} ${param.name}`).toBeTruthy();
      }
    }
  });

  it('names its schemas as components, each example valid against its zod schema, and refers to them with $ref', () => {
    const schemas = document.components.schemas as Json;
    for (const name of ['Link', 'LinkWithRules', 'Rule', 'GeoConditions', 'Campaign', 'Domain', 'QrCode', 'Webhook', 'WebhookDelivery', 'Conversion', 'Tag', 'Me', 'AnalyticsOverview', 'BreakdownRow', 'ExperimentReport', 'Error', 'Pagination', 'LinkCreate', 'RuleCreate']) {
      expect(schemas[name], name).toBeDefined();
    }
    const named = componentSchemas(operations);
    expect(Object.keys(componentExamples).length).toBeGreaterThan(20);
    for (const [name, example] of Object.entries(componentExamples)) {
      const entry = named.get(name);
      expect(entry, name).toBeDefined();
      expect(entry!.io, name).toBe('output');
      expect(entry!.schema.safeParse(example).error, name).toBeUndefined();
      expect(schemas[name].examples, name).toEqual([example]);
    }
    const text = JSON.stringify(document.paths);
    expect(text).toContain('"$ref":"#/components/schemas/Link"');
    expect(text).not.toContain('#/$defs/');
    // Every $ref resolves.
    for (const m of JSON.stringify(document).matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)) expect(document.components[m[1]!]?.[m[2]!], m[0]).toBeDefined();
  });

  it('types rules per type, include=rules and its rules, and every numeric query parameter as an integer', () => {
    const schemas = document.components.schemas as Json;
    const variants = schemas.Rule.oneOf as Json[];
    expect(variants.map((v) => v.properties.type.const)).toEqual(['geo', 'device', 'time', 'percentage']);
    expect(variants.map((v) => v.properties.conditions.$ref)).toEqual(['GeoConditions', 'DeviceConditions', 'TimeConditions', 'PercentageConditions'].map((n) => `#/components/schemas/${n}`));
    expect(schemas.GeoConditions.required).toEqual(['countries', 'operator']);
    expect(schemas.GeoConditionsInput.required).toEqual(['countries']);
    expect(schemas.RuleUpdate.properties.conditions.anyOf.map((c: Json) => c.$ref)).toHaveLength(4);

    const getLink = document.paths['/links/{id}'].get;
    expect(getLink.parameters.find((p: Json) => p.name === 'include').schema).toEqual({ type: 'string', enum: ['rules'] });
    expect(getLink.responses['200'].content['application/json'].schema.properties.data).toEqual({ $ref: '#/components/schemas/LinkWithRules' });
    expect(schemas.LinkWithRules.properties.rules).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Rule' } });

    let numeric = 0;
    for (const [path, methods] of Object.entries(document.paths as Json)) {
      for (const [method, op] of Object.entries(methods as Json)) {
        for (const param of (op.parameters as Json[]).filter((p) => p.in === 'query')) {
          const where = `${method} ${path} ?${param.name}`;
          // Whole numbers are integers to a client, whatever text the query string carries.
          expect(param.schema.pattern, where).not.toBe('^\\d{1,9}$');
          if (['page', 'limit'].includes(param.name)) {
            expect(param.schema.type, where).toBe('integer');
            numeric++;
          }
        }
      }
    }
    expect(numeric).toBeGreaterThan(20);
  });

  it('lists only the statuses an operation answers, with rate-limit, Retry-After and Idempotency-Key headers', () => {
    expect(Object.keys(document.paths['/health'].get.responses)).toEqual(['200', '400']);
    expect(Object.keys(document.paths['/ready'].get.responses)).toEqual(['200', '400', '503']);
    expect(Object.keys(document.paths['/links/{id}'].get.responses)).toEqual(['200', '400', '401', '403', '404', '429', '503']);
    expect(Object.keys(document.paths['/campaigns/{id}'].get.responses)).toEqual(['200', '400', '401', '403', '404', '429', '503']);
    expect(Object.keys(document.paths['/me'].get.responses)).toEqual(['200', '400', '401', '429', '503']);
    expect(Object.keys(document.paths['/conversions/s2s'].post.responses)).toEqual(['200', '201', '400', '401', '403', '404', '409', '413', '422', '429', '503']);
    for (const op of operations) {
      const operation = document.paths[op.path][op.method];
      const name = `${op.method} ${op.path}`;
      expect(Object.keys(operation.responses), name).not.toContain('500');
      const success = operation.responses[String(op.status)];
      if (op.scope) {
        expect(Object.keys(success.headers), name).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
        for (const status of ['429', '503']) expect(Object.keys(operation.responses[status].headers), `${name} ${status}`).toContain('Retry-After');
      } else {
        expect(success.headers ?? {}, name).toEqual({});
      }
      const takesKey = (operation.parameters as Json[]).some((p) => p.$ref === '#/components/parameters/IdempotencyKey');
      expect(takesKey, name).toBe(takesIdempotencyKey(op));
      if (takesKey) expect(Object.keys(operation.responses), name).toEqual(expect.arrayContaining(['409', '422']));
    }
    expect(operations.filter(takesIdempotencyKey).length).toBeGreaterThanOrEqual(15);
    // A 403's example names the scope its operation requires, as the API's answer does.
    const forbidding = Object.values(document.paths as Record<string, Record<string, Json>>).flatMap((methods) => Object.values(methods)).filter((o) => o.responses?.['403'] && o['x-required-scope']);
    expect(forbidding.length).toBeGreaterThan(30);
    for (const o of forbidding) {
      expect(o.responses['403'].content['application/json'].example.error, o.operationId).toEqual({ code: 'FORBIDDEN', message: `This API key lacks the ${o['x-required-scope']} scope` });
    }
    expect(document.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    // Where a status has several codes, its example is the operation's own error (a taken
    // short code, a disabled endpoint), not the Idempotency-Key's that every POST shares.
    const example409 = (path: string) => document.paths[path].post.responses['409'].content['application/json'].example.error.code;
    expect(example409('/links')).toBe('CONFLICT');
    expect(example409('/webhooks/{id}/test')).toBe('WEBHOOK_DISABLED');
    expect(example409('/campaigns')).toBe('IDEMPOTENCY_KEY_IN_USE');
  });

  it('an example request is accepted by the running API', async () => {
    const { key } = await api.tenant();
    const link = operations.find((op) => op.method === 'post' && op.path === '/links')!;
    const res = await api.request('POST', '/links', { key, body: link.example });
    expect(res.status).toBe(201);
    expect(link.response.safeParse(res.body.data).success).toBe(true);
  });

  it('serves the rendered reference (Swagger UI from this API, no other origin) without a key', async () => {
    const res = await fetch(`${api.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toMatch(/https?:|\*/);
    const html = await res.text();
    expect(html).toContain('src="/docs/swagger-ui-bundle.js"');
    expect((await fetch(`${api.url}/docs/swagger-ui-bundle.js`)).status).toBe(200);
  });

  it('groups every operation under a declared tag', () => {
    const declared = (document.tags as Json[]).map((t) => t.name);
    for (const [path, methods] of Object.entries(document.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.tags, `${method} ${path}`).toHaveLength(1);
        expect(declared, `${method} ${path}`).toContain(op.tags[0]);
      }
    }
  });
});

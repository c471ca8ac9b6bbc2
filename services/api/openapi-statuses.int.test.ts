import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { connectPostgres, type Sql } from '../../shared/db/postgres.ts';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { scopes, type Scope } from '../../shared/schemas/common.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startTcpProxy, type TcpProxy } from '../../shared/testing/tcp-proxy.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { pathParameterExample } from './openapi/examples.ts';
import { openApiDocument } from './openapi/openapi-document.ts';
import { operations, type Operation } from './openapi/operations.ts';
import { statusesOf, takesIdempotencyKey } from './openapi/statuses.ts';
import { listen, type RunningServer } from './server.ts';

const MAX_BODY = 65_536;
const secret = Buffer.alloc(32, 7);

/**
 * The document lists only the statuses an operation can answer (statuses.ts). This
 * holds the API to it: every operation is driven into the answers a client can
 * provoke (no key, a key without the scope, a bad query, a bad or oversized body,
 * a malformed or reused Idempotency-Key, an id that does not exist, its example,
 * the plan's rate limit, Postgres unreachable), and every (route, status) the API
 * counted in its own request metrics must be one the document lists for that
 * operation. A route answering a status it does not document fails here.
 */
describe('every status the API answers is in the OpenAPI document', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let sql: Sql;
  let server: RunningServer;
  const registry = new Registry();
  const keys: Record<string, string> = {};
  const documented = new Map<string, Set<number>>();
  /** `METHOD path status` -> the error codes the document lists. */
  const documentedCodes = new Map<string, string[]>();
  /** `METHOD path status` -> the error codes answered. */
  const answeredCodes = new Map<string, Set<string>>();

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const url = new URL(db.url);
    url.port = String(proxy.port);
    sql = connectPostgres(url.toString(), { max: 4 });
    const config = loadApiConfig({ REDIRECT_BASE_URL: 'http://go.test', API_MAX_BODY_BYTES: String(MAX_BODY) });
    server = await listen(createApiApp({ sql, config, logger: createLogger('statuses-test', 'silent'), bus: createMemoryBus(), secret, metrics: registry }), 0, '127.0.0.1');
    const full = await createWorkspace(sql, { name: 'statuses', plan: 'enterprise' });
    keys.full = (await createApiKey(sql, { workspaceId: full.id })).key;
    for (const scope of scopes) keys[scope] = (await createApiKey(sql, { workspaceId: full.id, scopes: scopes.filter((s) => s !== scope) })).key;
    const starter = await createWorkspace(sql, { name: 'starter', plan: 'starter' });
    keys.starter = (await createApiKey(sql, { workspaceId: starter.id })).key;
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, { 'x-error-codes'?: string[] }> }>> };
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        documented.set(`${method.toUpperCase()} ${path}`, new Set(Object.keys(op.responses).map(Number)));
        for (const [status, response] of Object.entries(op.responses)) if (response['x-error-codes']) documentedCodes.set(`${method.toUpperCase()} ${path} ${status}`, response['x-error-codes']);
      }
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await proxy?.restore();
    await sql?.end({ timeout: 5 });
    await proxy?.close();
    await db?.close();
  });

  const pathOf = (op: Operation) => op.path.replace(/\{(\w+)\}/g, (_, name: string) => pathParameterExample(op.path, name));

  async function send(op: Operation, options: { key?: string; body?: string; query?: string; idem?: string; path?: string } = {}): Promise<number> {
    const headers: Record<string, string> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.idem !== undefined) headers['idempotency-key'] = options.idem;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.url}${options.path ?? pathOf(op)}${options.query ?? ''}`, { method: op.method.toUpperCase(), headers, body: options.body });
    const text = await res.text();
    if (res.status >= 400) {
      const key = `${op.method.toUpperCase()} ${op.path} ${res.status}`;
      if (!answeredCodes.has(key)) answeredCodes.set(key, new Set());
      answeredCodes.get(key)!.add((JSON.parse(text) as { error: { code: string } }).error.code);
    }
    return res.status;
  }

  const exampleBody = (op: Operation) => (op.body ? JSON.stringify(op.example) : undefined);

  /** (METHOD path) -> statuses, from the API's own request counter. */
  async function answered(): Promise<Map<string, Set<number>>> {
    // The registry the app counts in (served on the admin port, never on the API's).
    const text = await registry.metrics();
    const seen = new Map<string, Set<number>>();
    for (const m of text.matchAll(/^linkroute_api_http_requests_total\{method="(\w+)",route="([^"]+)",status="(\d+)"\} (\d+)/gm)) {
      const key = `${m[1]} ${m[2]!.replace(/:(\w+)/g, '{$1}')}`;
      if (!seen.has(key)) seen.set(key, new Set());
      seen.get(key)!.add(Number(m[3]));
    }
    return seen;
  }

  function expectDocumented(seen: Map<string, Set<number>>): void {
    for (const [operation, statuses] of seen) {
      if (operation.startsWith('HEAD ')) continue;
      const listed = documented.get(operation);
      expect(listed, `${operation} is not documented`).toBeDefined();
      for (const status of statuses) expect([...listed!], `${operation} answered ${status}`).toContain(status);
    }
    for (const [answer, codes] of answeredCodes) for (const code of codes) expect(documentedCodes.get(answer) ?? [], `${answer} answered ${code}`).toContain(code);
  }

  it('drives every operation into its answers; each status it gave is listed for it', async () => {
    const link = await (await fetch(`${server.url}/links`, { method: 'POST', headers: { authorization: `Bearer ${keys.full}`, 'content-type': 'application/json' }, body: '{"destinationUrl":"https://example.com/s"}' })).json() as { data: { id: string } };
    const oversized = JSON.stringify({ title: 'x'.repeat(MAX_BODY) });
    for (const op of operations) {
      if (op.scope !== undefined) {
        await send(op);
        if (op.scope !== 'any') await send(op, { key: keys[op.scope as Scope] });
      }
      const key = keys.full;
      // Its example, twice (a second create conflicts: short code, hostname).
      await send(op, { key, body: exampleBody(op) });
      await send(op, { key, body: exampleBody(op) });
      if (op.query) await send(op, { key, query: '?notAParameter=1' });
      if (op.body) {
        await send(op, { key, body: '{"notAField":1}' });
        if (op.path !== '/links/bulk') await send(op, { key, body: oversized });
      }
      if (takesIdempotencyKey(op)) {
        const idem = `statuses-${op.method}-${op.path}`;
        await send(op, { key, idem: 'has space', body: exampleBody(op) });
        await send(op, { key, idem, body: exampleBody(op) });
        await send(op, { key, idem, body: exampleBody(op), query: '?another=request' });
      }
    }
    // A link deleted twice: 410.
    const del = operations.find((o) => o.method === 'delete' && o.path === '/links/{id}')!;
    for (let i = 0; i < 2; i++) await send(del, { key: keys.full, path: `/links/${link.data.id}` });
    // A conversion of a real click, then the same order again: 201, then 200 duplicate.
    const s2s = operations.find((o) => o.path === '/conversions/s2s')!;
    const conversion = JSON.stringify({ clickId: createClickId(secret, link.data.id, Date.now()), orderId: 'statuses-1' });
    for (let i = 0; i < 2; i++) await send(s2s, { key: keys.full, body: conversion });

    // A test event to a real endpoint: 202; once it is disabled, 409 WEBHOOK_DISABLED.
    const hook = (await (await fetch(`${server.url}/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${keys.full}`, 'content-type': 'application/json' }, body: '{"url":"https://hooks.example.com/s","events":["link.created"]}' })).json()) as { data: { id: string } };
    const webhookTest = operations.find((o) => o.path === '/webhooks/{id}/test')!;
    expect(await send(webhookTest, { key: keys.full, path: `/webhooks/${hook.data.id}/test` })).toBe(202);
    await fetch(`${server.url}/webhooks/${hook.data.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${keys.full}`, 'content-type': 'application/json' }, body: '{"enabled":false}' });
    expect(await send(webhookTest, { key: keys.full, path: `/webhooks/${hook.data.id}/test` })).toBe(409);

    // The plan's limit: 100 requests an hour on starter.
    const me = operations.find((o) => o.path === '/me')!;
    for (let i = 0; i < 100; i++) await send(me, { key: keys.starter });
    for (const op of operations) if (op.scope !== undefined) await send(op, { key: keys.starter, body: exampleBody(op) });

    const seen = await answered();
    expectDocumented(seen);
    const all = new Set([...seen.values()].flatMap((s) => [...s]));
    for (const status of [200, 201, 202, 400, 401, 403, 404, 409, 410, 413, 422, 429, 503]) expect([...all], `no operation answered ${status}`).toContain(status);
    expect([...seen.get('POST /conversions/s2s')!]).toEqual(expect.arrayContaining(statusesOf(s2s).slice(0, 2)));
  }, 120_000);

  it('Postgres unreachable: every operation that needs it answers a documented 503', async () => {
    await proxy.cut();
    try {
      for (const op of operations) {
        const status = await send(op, { key: keys.full, body: exampleBody(op) });
        if (op.scope !== undefined || op.path === '/ready') expect(status, `${op.method} ${op.path}`).toBe(503);
      }
    } finally {
      await proxy.restore();
    }
    expectDocumented(await answered());
  }, 60_000);

  it('a URL holding a NUL is a documented 400 for every operation (refused before routing: counted as no route, so it runs last)', async () => {
    for (const op of operations) {
      const status = await send(op, { key: keys.full, body: exampleBody(op), query: '?note=a%00b' });
      expect(status, `${op.method} ${op.path}`).toBe(400);
      expect([...documented.get(`${op.method.toUpperCase()} ${op.path}`)!], `${op.method} ${op.path}`).toContain(400);
    }
  });
});

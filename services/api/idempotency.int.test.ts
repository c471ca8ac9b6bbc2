import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres, type Sql } from '../../shared/db/postgres.ts';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';

interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** Two API instances, each with its own connection pool, on one Postgres database. */
describe('Idempotency-Key across two API instances', () => {
  let db: TestDatabase;
  let secondPool: Sql;
  const apis: RunningServer[] = [];
  let key: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    secondPool = connectPostgres(db.url, { max: 5 });
    const config = loadApiConfig({});
    const logger = createLogger('idempotency-test', 'silent');
    for (const sql of [db.sql, secondPool]) apis.push(await listen(createApiApp({ sql, config, logger }), 0, '127.0.0.1'));
    key = await newKey();
  });
  afterAll(async () => {
    for (const api of apis) await api.close();
    await secondPool?.end({ timeout: 5 });
    await db?.close();
  });

  async function newKey(): Promise<string> {
    const ws = await createWorkspace(db.sql, { name: 'idempotency', plan: 'enterprise' });
    return (await createApiKey(db.sql, { workspaceId: ws.id })).key;
  }

  async function send(instance: number, method: string, path: string, options: { idem?: string; body?: unknown; rawBody?: string; apiKey?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey ?? key}` };
    if (options.idem !== undefined) headers['idempotency-key'] = options.idem;
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(apis[instance]!.url + path, { method, headers, body });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text), text, headers: res.headers };
  }

  const linksWithCode = async (code: string) => (await db.sql`SELECT id FROM links WHERE short_code = ${code}`).length;
  const idem = () => `key-${Math.random().toString(36).slice(2)}`;

  it('answers a repeat with the first response, byte for byte, from either instance, and does nothing again', async () => {
    const k = idem();
    const body = { destinationUrl: 'https://example.com/once', shortCode: 'idem-once', title: 'Once' };
    const first = await send(0, 'POST', '/links', { idem: k, body });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same fields in another order are the same request.
    const again = await send(1, 'POST', '/links', { idem: k, rawBody: JSON.stringify({ title: 'Once', shortCode: 'idem-once', destinationUrl: 'https://example.com/once' }) });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(await linksWithCode('idem-once')).toBe(1);

    const patchKey = idem();
    const patched = await send(1, 'PATCH', `/links/${first.body.data.id}`, { idem: patchKey, body: { title: 'Twice' } });
    expect(patched.status).toBe(200);
    await send(0, 'PATCH', `/links/${first.body.data.id}`, { body: { title: 'Changed since' } });
    const replayed = await send(0, 'PATCH', `/links/${first.body.data.id}`, { idem: patchKey, body: { title: 'Twice' } });
    expect(replayed.text).toBe(patched.text);
    const [row] = await db.sql<{ title: string }[]>`SELECT title FROM links WHERE id = ${first.body.data.id}`;
    expect(row!.title).toBe('Changed since'); // the replay did not write again
  });

  it('refuses the key with another body, path or method: 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const k = idem();
    expect((await send(0, 'POST', '/links', { idem: k, body: { destinationUrl: 'https://example.com/a' } })).status).toBe(201);
    for (const [method, path, body] of [
      ['POST', '/links', { destinationUrl: 'https://example.com/b' }],
      ['POST', '/campaigns', { name: 'x' }],
      ['POST', '/links?x=1', { destinationUrl: 'https://example.com/a' }],
    ] as const) {
      const res = await send(1, method, path, { idem: k, body });
      expect(res.status, path).toBe(422);
      expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
  });

  it('runs concurrent same-key requests on both instances once: one creates, the rest replay it or are told it is in progress (409)', async () => {
    const k = idem();
    // A password is hashed slowly (scrypt), which keeps the first request in flight.
    const body = { destinationUrl: 'https://example.com/race', shortCode: 'idem-race', password: 'hunter22' };
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i % 2, 'POST', '/links', { idem: k, body })));
    const created = answers.filter((a) => a.status === 201);
    const busy = answers.filter((a) => a.status === 409);
    expect(created.length + busy.length).toBe(10);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.text)).size).toBe(1);
    for (const a of busy) {
      expect(a.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(a.headers.get('retry-after')).toBe('1');
    }
    expect(await linksWithCode('idem-race')).toBe(1);
    // Once done, every retry gets the stored answer.
    const later = await send(1, 'POST', '/links', { idem: k, body });
    expect(later.status).toBe(201);
    expect(later.text).toBe(created[0]!.text);
  });

  it('keeps answers the operation gave (404, 409), forgets requests that never ran (400) so a corrected retry runs', async () => {
    const notFound = idem();
    const missing = await send(0, 'PATCH', '/links/link_doesnotexist000000000', { idem: notFound, body: { title: 'x' } });
    expect(missing.status).toBe(404);
    expect((await send(1, 'PATCH', '/links/link_doesnotexist000000000', { idem: notFound, body: { title: 'x' } })).headers.get('idempotent-replayed')).toBe('true');

    await send(0, 'POST', '/links', { body: { destinationUrl: 'https://example.com/taken', shortCode: 'idem-taken' } });
    const conflict = idem();
    expect((await send(0, 'POST', '/links', { idem: conflict, body: { destinationUrl: 'https://example.com/t2', shortCode: 'idem-taken' } })).status).toBe(409);
    const replay = await send(1, 'POST', '/links', { idem: conflict, body: { destinationUrl: 'https://example.com/t2', shortCode: 'idem-taken' } });
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('CONFLICT');

    const invalid = idem();
    const bad = await send(0, 'POST', '/links', { idem: invalid, body: { destinationUrl: 'ftp://example.com' } });
    expect(bad.status).toBe(400);
    const fixed = await send(1, 'POST', '/links', { idem: invalid, body: { destinationUrl: 'https://example.com/fixed' } });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    const malformed = idem();
    expect((await send(0, 'POST', '/links', { idem: malformed, rawBody: '{"destinationUrl":' })).status).toBe(400);
    expect((await send(0, 'POST', '/links', { idem: malformed, body: { destinationUrl: 'https://example.com/m' } })).status).toBe(201);
  });

  it('scopes keys to their workspace; an expired key (24 h) or a lapsed claim of a dead instance runs again', async () => {
    const k = idem();
    const otherKey = await newKey();
    const mine = await send(0, 'POST', '/campaigns', { idem: k, body: { name: 'mine' } });
    const theirs = await send(1, 'POST', '/campaigns', { idem: k, body: { name: 'mine' }, apiKey: otherKey });
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);

    await db.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second', created_at = now() - interval '24 hours' WHERE key = ${k}`;
    const afterExpiry = await send(0, 'POST', '/campaigns', { idem: k, body: { name: 'mine' } });
    expect(afterExpiry.status).toBe(201);
    expect(afterExpiry.body.data.id).not.toBe(mine.body.data.id);

    const lapsed = idem();
    const body = { name: 'after a crash' };
    const first = await send(0, 'POST', '/campaigns', { idem: lapsed, body });
    // As if the instance that ran it had died before storing its answer.
    await db.sql`UPDATE idempotency_keys SET response_status = NULL, response_body = NULL, locked_until = now() + interval '1 minute' WHERE key = ${lapsed}`;
    expect((await send(1, 'POST', '/campaigns', { idem: lapsed, body })).status).toBe(409);
    await db.sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = ${lapsed}`;
    const rerun = await send(1, 'POST', '/campaigns', { idem: lapsed, body });
    expect(rerun.status).toBe(201);
    expect(rerun.body.data.id).not.toBe(first.body.data.id);
  });

  it('refuses malformed keys with 400 and ignores the header on GET and DELETE', async () => {
    for (const bad of ['x'.repeat(256), 'has space', 'tab\there']) {
      const res = await send(0, 'POST', '/campaigns', { idem: bad, body: { name: 'bad key' } });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details[0].path).toBe('(headers).idempotency-key');
    }
    const k = idem();
    const list = await send(0, 'GET', '/campaigns', { idem: k });
    expect(list.status).toBe(200);
    expect((await send(0, 'POST', '/campaigns', { idem: k, body: { name: 'after a GET' } })).status).toBe(201);
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${k}`;
    expect(row!.n).toBe(1);
  });
});

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import Koa from 'koa';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { looksSealed } from '../../shared/sealed-box.ts';
import { startDnsServer, type DnsServer } from '../../shared/testing/dns-server.ts';
import { connectPostgres, type Sql } from '../../shared/db/postgres.ts';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { backends, createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { startTcpProxy, type TcpProxy } from '../../shared/testing/tcp-proxy.ts';
import { createApiApp, type RouteTable } from './app.ts';
import { loadApiConfig } from './config.ts';
import { clickHouseLinkCounters } from './link-counters.ts';
import { listen, type RunningServer } from './server.ts';
import { idempotency, markResponseHoldsSecret } from './middleware/idempotency.ts';
import { errorHandler } from './middleware/error-handler.ts';

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
  /** LINKROUTE_SECRET, the same on both instances. */
  const secret = randomBytes(32);
  const logger = createLogger('idempotency-test', 'silent');
  let dns: DnsServer;
  /** TXT records the loopback DNS server answers, which custom domains are verified through. */
  const dnsRecords = new Map<string, string[]>();
  let routes: RouteTable;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    secondPool = connectPostgres(db.url, { max: 5 });
    dns = await startDnsServer(dnsRecords);
    const config = loadApiConfig({ DNS_SERVERS: dns.address });
    const bus = createMemoryBus();
    for (const sql of [db.sql, secondPool]) {
      const app = createApiApp({ sql, config, logger, secret, bus });
      routes ??= (app.context as { routeTable?: RouteTable }).routeTable!;
      apis.push(await listen(app, 0, '127.0.0.1'));
    }
    key = await newKey();
  });
  afterAll(async () => {
    dns?.close();
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
    // A number too large for a double is not null: the corrected body is another request.
    const big = idem();
    const tooLarge = await send(0, 'POST', '/links/bulk', { idem: big, rawBody: '{"links":[{"destinationUrl":"https://example.com/big","clicksLimit":1e999}]}' });
    expect([tooLarge.status, tooLarge.body.data[0].success]).toEqual([200, false]);
    const corrected = await send(1, 'POST', '/links/bulk', { idem: big, rawBody: '{"links":[{"destinationUrl":"https://example.com/big","clicksLimit":null}]}' });
    expect([corrected.status, corrected.body.error?.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
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

  it('keeps answers the operation gave (404), forgets requests that never ran or conflicted (400, 409) so a retry runs', async () => {
    const notFound = idem();
    const missing = await send(0, 'PATCH', '/links/link_doesnotexist000000000', { idem: notFound, body: { title: 'x' } });
    expect(missing.status).toBe(404);
    expect((await send(1, 'PATCH', '/links/link_doesnotexist000000000', { idem: notFound, body: { title: 'x' } })).headers.get('idempotent-replayed')).toBe('true');

    // A 409 changed nothing, and its conflict may be gone by the retry: the hostname taken
    // is freed, and the retry with the key runs and claims it.
    const hostname = `idem-${idem().slice(4)}.example.com`;
    const holder = await send(0, 'POST', '/domains', { body: { hostname } });
    expect(holder.status).toBe(201);
    const conflict = idem();
    const refused = await send(0, 'POST', '/domains', { idem: conflict, body: { hostname } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    const again = await send(1, 'POST', '/domains', { idem: conflict, body: { hostname } });
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect((await send(0, 'DELETE', `/domains/${holder.body.data.id}`)).status).toBe(200);
    const claimed = await send(1, 'POST', '/domains', { idem: conflict, body: { hostname } });
    expect(claimed.status).toBe(201);
    expect(claimed.headers.get('idempotent-replayed')).toBeNull();
    expect(claimed.body.data.hostname).toBe(hostname);

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

  it('a request slower than the lease keeps its key while it runs: a retry meanwhile is a 409, not a second run, and replays the answer after', async () => {
    // Two instances with a 2 s lease (renewed every 0.5 s); the first request waits on a
    // lock for 2.5 leases, as behind a migration or a long transaction.
    const config = loadApiConfig({ DNS_SERVERS: dns.address, API_IDEMPOTENCY_LEASE_SECONDS: '2' });
    const slow: RunningServer[] = [];
    for (const sql of [db.sql, secondPool]) slow.push(await listen(createApiApp({ sql, config, logger, secret, bus: createMemoryBus() }), 0, '127.0.0.1'));
    const locker = connectPostgres(db.url, { max: 1 });
    try {
      const k = idem();
      const code = `slow-${k}`;
      const post = (instance: number) =>
        fetch(`${slow[instance]!.url}/links`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': k },
          body: JSON.stringify({ destinationUrl: 'https://example.com/slow', shortCode: code }),
        }).then(async (res) => ({ status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') }));
      let unlock!: () => void;
      const unlocked = new Promise<void>((resolve) => (unlock = resolve));
      let isLocked!: () => void;
      const locked = new Promise<void>((resolve) => (isLocked = resolve));
      const holding = locker.begin(async (tx) => {
        await tx`LOCK TABLE links IN SHARE MODE`;
        isLocked();
        await unlocked;
      });
      await locked;
      const first = post(0);
      // Claimed, and waiting on the lock.
      while ((await db.sql`SELECT 1 FROM idempotency_keys WHERE key = ${k}`).length === 0) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 5_000));
      const meanwhile = await post(1);
      expect(meanwhile.status).toBe(409);
      expect(JSON.parse(meanwhile.text).error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      unlock();
      await holding;
      const answered = await first;
      expect(answered.status).toBe(201);
      const retry = await post(1);
      expect([retry.status, retry.replayed, retry.text]).toEqual([201, 'true', answered.text]);
      expect(await linksWithCode(code)).toBe(1);
    } finally {
      await locker.end({ timeout: 5 });
      for (const server of slow) await server.close();
    }
  });

  it('a request whose claim lapsed and was taken by a retry neither lets the retry claim go when it fails nor stores its answer over it', async () => {
    const workspace = await createWorkspace(db.sql, { name: 'lapsed claim', plan: 'enterprise' });
    const withIdempotency = idempotency(db.sql, logger, secret);
    /** Each run waits for its turn, then answers (or fails) as told. */
    const turns: Array<{ go: Promise<'fail' | 'answer'>; release: (how: 'fail' | 'answer') => void }> = [];
    const app = new Koa();
    app.use(errorHandler(logger));
    app.use((ctx, next) =>
      withIdempotency(ctx, { workspaceId: workspace.id, keyId: 'key_test' }, async () => {
        let release!: (how: 'fail' | 'answer') => void;
        const go = new Promise<'fail' | 'answer'>((resolve) => (release = resolve));
        const run = turns.push({ go, release });
        if ((await go) === 'fail') throw new Error(`run ${run} failed`);
        ctx.status = 201;
        ctx.body = { success: true, data: { run } };
        await next();
      }),
    );
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const k = idem();
      const post = () => fetch(`${server.url}/thing`, { method: 'POST', headers: { 'idempotency-key': k } }).then(async (res) => ({ status: res.status, body: await res.text() }));
      const first = post();
      while (turns.length < 1) await new Promise((r) => setTimeout(r, 10));
      // As if the first had run past its lease without renewing (its instance stalled): a retry takes the key.
      await db.sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = ${k}`;
      const second = post();
      while (turns.length < 2) await new Promise((r) => setTimeout(r, 10));
      // The first fails: the key stays the second's, whose retry is told it is in progress.
      turns[0]!.release('fail');
      expect((await first).status).toBe(500);
      expect((await post()).status).toBe(409);
      turns[1]!.release('answer');
      const answered = await second;
      expect(answered.status).toBe(201);
      // The second's answer is the key's, replayed, with no third run.
      expect(await post()).toEqual(answered);
      expect(turns.length).toBe(2);
    } finally {
      for (const turn of turns) turn.release('answer');
      await server.close();
    }
  });

  it('replays an answer only to the API key that got it: another key of the workspace is 422 and never sees a signing secret', async () => {
    const ws = await createWorkspace(db.sql, { name: 'two keys', plan: 'enterprise' });
    const owner = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
    const sibling = (await createApiKey(db.sql, { workspaceId: ws.id, scopes: ['webhooks:write'] })).key;
    const k = idem();
    const body = { url: 'https://hooks.example.com/sibling', events: ['link.created'] };
    const first = await send(0, 'POST', '/webhooks', { idem: k, body, apiKey: owner });
    expect(first.status).toBe(201);
    const signingSecret: string = first.body.data.secret;

    for (const instance of [0, 1]) {
      const other = await send(instance, 'POST', '/webhooks', { idem: k, body, apiKey: sibling });
      expect(other.status, other.text).toBe(422);
      expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(other.headers.get('idempotent-replayed')).toBeNull();
      expect(other.text).not.toContain(signingSecret);
    }
    const mine = await send(1, 'POST', '/webhooks', { idem: k, body, apiKey: owner });
    expect(mine.status).toBe(201);
    expect(mine.text).toBe(first.text);
    const [count] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = ${body.url}`;
    expect(count!.n).toBe(1);
  });

  it('refuses malformed keys with 400 and ignores the header on GET and DELETE', async () => {
    // An empty header is a key the client meant to send: refused, not taken for none.
    for (const bad of ['x'.repeat(256), 'has space', 'tab\there', '']) {
      const res = await send(0, 'POST', '/campaigns', { idem: bad, body: { name: 'bad key' } });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details[0].path).toBe('(headers).idempotency-key');
    }
    // Two header lines (fetch would join them): refused, saying so.
    const twice = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${apis[0]!.url}/campaigns`);
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: [
        'host', url.host, 'authorization', `Bearer ${key}`, 'content-type', 'application/json', 'idempotency-key', 'first', 'idempotency-key', 'second',
      ] }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.once('error', reject);
      req.end(JSON.stringify({ name: 'two keys' }));
    });
    expect(twice.status, twice.body).toBe(400);
    expect(JSON.parse(twice.body).error.details, twice.body).toEqual([{ path: '(headers).idempotency-key', message: 'must be sent once; it came 2 times' }]);
    const k = idem();
    const list = await send(0, 'GET', '/campaigns', { idem: k });
    expect(list.status).toBe(200);
    expect((await send(0, 'POST', '/campaigns', { idem: k, body: { name: 'after a GET' } })).status).toBe(201);
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${k}`;
    expect(row!.n).toBe(1);
  });

  const storedBody = async (k: string) => (await db.sql<{ responseBody: string }[]>`SELECT response_body FROM idempotency_keys WHERE key = ${k}`)[0]!.responseBody;

  it('keeps a webhook signing secret only sealed: the row never holds it, a replay shows the first answer byte for byte', async () => {
    const k = idem();
    const body = { url: 'https://hooks.example.com/idem', events: ['link.created'] };
    const first = await send(0, 'POST', '/webhooks', { idem: k, body });
    expect(first.status).toBe(201);
    const signingSecret: string = first.body.data.secret;
    expect(signingSecret).toMatch(/^whsec_/);

    const row = await storedBody(k);
    expect(looksSealed(row)).toBe(true);
    expect(row).not.toContain('whsec_');
    expect(row).not.toContain(signingSecret.slice(6, 26));
    expect(row).not.toContain(Buffer.from(signingSecret).toString('base64url').slice(8, 28));
    expect(row).not.toContain(first.body.data.id); // nothing of the answer is readable
    const [dump] = await db.sql<{ text: string }[]>`SELECT string_agg(t::text, ' ') AS text FROM idempotency_keys t`;
    expect(dump!.text).not.toContain(signingSecret.slice(6));

    for (const instance of [1, 0]) {
      const replay = await send(instance, 'POST', '/webhooks', { idem: k, body });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    }
    const [count] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = ${body.url}`;
    expect(count!.n).toBe(1);
  });

  it('seals every stored answer, errors included; an answer sealed under another LINKROUTE_SECRET is not replayed', async () => {
    const k = idem();
    const created = await send(0, 'POST', '/campaigns', { idem: k, body: { name: 'sealed' } });
    expect(looksSealed(await storedBody(k))).toBe(true);
    expect(await storedBody(k)).not.toContain('sealed');
    const missing = idem();
    await send(0, 'PATCH', '/links/link_doesnotexist000000000', { idem: missing, body: { title: 'x' } });
    expect(looksSealed(await storedBody(missing))).toBe(true);
    expect((await send(1, 'POST', '/campaigns', { idem: k, body: { name: 'sealed' } })).text).toBe(created.text);

    const other = await listen(createApiApp({ sql: db.sql, config: loadApiConfig({}), logger, secret: randomBytes(32) }), 0, '127.0.0.1');
    try {
      const res = await fetch(`${other.url}/campaigns`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': k, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'sealed' }),
      });
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INTERNAL_ERROR');
    } finally {
      await other.close();
    }
    const [count] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM campaigns WHERE id = ${created.body.data.id} OR name = 'sealed'`;
    expect(count!.n).toBe(1);
  });

  it('without LINKROUTE_SECRET keeps no answer marked as holding a secret (a retry runs again), and other answers as they are', async () => {
    const workspace = await createWorkspace(db.sql, { name: 'no secret', plan: 'enterprise' });
    const withIdempotency = idempotency(db.sql, logger);
    let runs = 0;
    const app = new Koa();
    app.use(errorHandler(logger));
    app.use((ctx, next) =>
      withIdempotency(ctx, { workspaceId: workspace.id, keyId: 'key_test' }, async () => {
        runs++;
        if (ctx.path === '/secret') markResponseHoldsSecret(ctx);
        ctx.status = 201;
        ctx.body = { success: true, data: { secret: `whsec_run${runs}` } };
        await next();
      }),
    );
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const post = async (path: string, k: string) => (await fetch(server.url + path, { method: 'POST', headers: { 'idempotency-key': k } })).text();
      const [secretKey, plainKey] = [idem(), idem()];
      expect(await post('/secret', secretKey)).toContain('whsec_run1');
      expect(await post('/secret', secretKey)).toContain('whsec_run2');
      const [row] = await db.sql`SELECT 1 FROM idempotency_keys WHERE key = ${secretKey}`;
      expect(row).toBeUndefined();
      const plain = await post('/plain', plainKey);
      expect(await post('/plain', plainKey)).toBe(plain);
      expect(await storedBody(plainKey)).toBe(plain);
      expect(runs).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('the upgrade to sealed answers drops stored answers that hold a signing secret in plain text, and keeps others', async () => {
    const workspace = await createWorkspace(db.sql, { name: 'upgrade', plan: 'enterprise' });
    const [leaky, plain] = [idem(), idem()];
    for (const [k, body] of [
      [leaky, '{"success":true,"data":{"id":"wh_x","secret":"whsec_AAAA"}}'],
      [plain, '{"success":true,"data":{"id":"campaign_x"}}'],
    ]) {
      await db.sql`INSERT INTO idempotency_keys (workspace_id, key, fingerprint, response_status, response_body, expires_at)
        VALUES (${workspace.id}, ${k!}, 'f', 201, ${body!}, now() + interval '1 hour')`;
    }
    await db.sql.unsafe(await readFile(new URL('../../shared/db/migrations/0013_idempotency_sealed_answers.sql', import.meta.url), 'utf8'));
    const left = await db.sql<{ key: string }[]>`SELECT key FROM idempotency_keys WHERE workspace_id = ${workspace.id}`;
    expect(left.map((r) => r.key)).toEqual([plain]);
  });

  /**
   * Sends `request` with a new key on instance 0, then again on instance 1: the
   * second answer must be the first, byte for byte, marked replayed.
   */
  async function replayed(method: string, path: string, body?: unknown): Promise<Answer> {
    const k = idem();
    const first = await send(0, method, path, { idem: k, ...(body === undefined ? {} : { body }) });
    expect(first.status, `${method} ${path}: ${first.text}`).toBeLessThan(300);
    const again = await send(1, method, path, { idem: k, ...(body === undefined ? {} : { body }) });
    expect(again.status, `${method} ${path}`).toBe(first.status);
    expect(again.text, `${method} ${path}`).toBe(first.text);
    expect(again.headers.get('idempotent-replayed'), `${method} ${path}`).toBe('true');
    return first;
  }
  const count = async (query: Promise<Array<{ n: number }>>) => (await query)[0]!.n;

  it('replays bulk creates and bulk updates: each link once, no second write', async () => {
    const codes = ['idem-bulk-a', 'idem-bulk-b', 'idem-bulk-c'];
    const created = await replayed('POST', '/links/bulk', { links: codes.map((shortCode) => ({ destinationUrl: `https://example.com/${shortCode}`, shortCode })) });
    expect(created.body.data.map((item: { success: boolean }) => item.success)).toEqual([true, true, true]);
    expect(await count(db.sql`SELECT count(*)::int AS n FROM links WHERE short_code IN ${db.sql(codes)}`)).toBe(3);

    const ids = created.body.data.map((item: { data: { id: string } }) => item.data.id);
    const k = idem();
    const patched = await send(0, 'PATCH', '/links/bulk', { idem: k, body: { ids, patch: { title: 'bulk once' } } });
    expect(patched.status).toBe(200);
    await db.sql`UPDATE links SET title = 'changed since' WHERE id IN ${db.sql(ids)}`;
    const again = await send(1, 'PATCH', '/links/bulk', { idem: k, body: { ids, patch: { title: 'bulk once' } } });
    expect(again.text).toBe(patched.text);
    expect(await count(db.sql`SELECT count(*)::int AS n FROM links WHERE id IN ${db.sql(ids)} AND title = 'changed since'`)).toBe(3);
  });

  it('replays rule creates and updates', async () => {
    const campaign = (await send(0, 'POST', '/campaigns', { body: { name: 'idem rules' } })).body.data;
    const rule = await replayed('POST', '/rules', { campaignId: campaign.id, type: 'percentage', conditions: { percentage: 30 }, destinationUrl: 'https://example.com/r' });
    expect(await count(db.sql`SELECT count(*)::int AS n FROM rules WHERE campaign_id = ${campaign.id}`)).toBe(1);
    await replayed('PATCH', `/rules/${rule.body.data.id}`, { priority: 77 });
  });

  it('replays QR codes: one image record', async () => {
    const link = (await send(0, 'POST', '/links', { body: { destinationUrl: 'https://example.com/qr' } })).body.data;
    await replayed('POST', '/qr', { linkId: link.id, format: 'svg' });
    expect(await count(db.sql`SELECT count(*)::int AS n FROM qr_codes WHERE link_id = ${link.id}`)).toBe(1);
  });

  it('replays a server-to-server conversion as recorded (201), where a retry without the key is told it is a duplicate', async () => {
    const link = (await send(0, 'POST', '/links', { body: { destinationUrl: 'https://example.com/conv', conversionTracking: true, trackingType: 's2s' } })).body.data;
    const body = { clickId: createClickId(secret, link.id, Date.now()), event: 'purchase', value: 10, orderId: `idem-order-${idem()}` };
    const first = await replayed('POST', '/conversions/s2s', body);
    expect(first.status).toBe(201);
    expect(first.body.data.duplicate).toBe(false);
    const unkeyed = await send(0, 'POST', '/conversions/s2s', { body });
    expect(unkeyed.status).toBe(200);
    expect(unkeyed.body.data).toMatchObject({ conversionId: first.body.data.conversionId, duplicate: true });
    expect(await count(db.sql`SELECT count(*)::int AS n FROM conversion_orders WHERE order_id = ${body.orderId}`)).toBe(1);
  });

  it('replays domain registration, and a bodyless verify keeps its first verdict for the key', async () => {
    const hostname = `idem-${Date.now()}.example.com`;
    const domain = await replayed('POST', '/domains', { hostname });
    expect(await count(db.sql`SELECT count(*)::int AS n FROM domains WHERE hostname = ${hostname}`)).toBe(1);

    const k = idem();
    const failed = await send(0, 'POST', `/domains/${domain.body.data.id}/verify`, { idem: k });
    expect(failed.body.data.status).toBe('failed');
    dnsRecords.set(domain.body.data.verification.name, [domain.body.data.verification.value]);
    const replay = await send(1, 'POST', `/domains/${domain.body.data.id}/verify`, { idem: k });
    expect(replay.text).toBe(failed.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const [row] = await db.sql<{ status: string }[]>`SELECT status FROM domains WHERE id = ${domain.body.data.id}`;
    expect(row!.status).toBe('failed'); // the replay checked nothing
    expect((await send(1, 'POST', `/domains/${domain.body.data.id}/verify`, { idem: idem() })).body.data.status).toBe('verified');
  });

  it('replays webhook updates and test events: one event queued', async () => {
    const hook = (await send(0, 'POST', '/webhooks', { body: { url: 'https://hooks.example.com/idem-test', events: ['link.created'] } })).body.data;
    await replayed('PATCH', `/webhooks/${hook.id}`, { description: 'once' });
    const queued = await replayed('POST', `/webhooks/${hook.id}/test`);
    expect(queued.status).toBe(202);
    expect(await count(db.sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE endpoint_id = ${hook.id}`)).toBe(1);
  });

  it('every POST and PATCH the router has takes the header (a new route cannot miss it); GET and DELETE do not', async () => {
    const writes = routes.flatMap((r) => r.methods.filter((m) => m === 'POST' || m === 'PATCH').map((method) => ({ method, path: r.path.replace(/:(\w+)/g, 'x_$1') })));
    expect(writes.length).toBeGreaterThanOrEqual(15);
    for (const { method, path } of writes) {
      const res = await send(0, method, path, { idem: 'not a valid key', body: {} });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error.details, `${method} ${path}`).toEqual([expect.objectContaining({ path: '(headers).idempotency-key' })]);
    }
    const reads = routes.flatMap((r) => r.methods.filter((m) => m === 'GET' || m === 'DELETE').map((method) => ({ method, path: r.path.replace(/:(\w+)/g, 'x_$1') })));
    for (const { method, path } of reads) {
      const res = await fetch(apis[0]!.url + path, { method, headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'not a valid key' } });
      expect(await res.text(), `${method} ${path}`).not.toContain('(headers).idempotency-key');
    }
  });
});

/**
 * A replay is the first answer, headers that describe its body included: links read
 * while ClickHouse could not answer carry zero counters and `X-Linkroute-Counters:
 * unavailable`, and so must their replay, or the client takes the zeros for counts.
 * Instance 0 reaches ClickHouse (embedded chDB) through a proxy the test cuts;
 * instance 1 reaches it directly, so a replay there would count again if it ran.
 */
describe.each(backends)('Idempotency-Key replays the headers of the answer on %s', (backend) => {
  let db: TestDatabase;
  let ch: TestClickHouse;
  let chProxy: TcpProxy;
  const clients: ClickHouseClient[] = [];
  const apis: RunningServer[] = [];
  let key: string;
  const secret = randomBytes(32);
  const logger = createLogger('idempotency-headers-test', 'silent');

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ch = await createTestClickHouse();
    const direct = connectClickHouse(ch.url);
    clients.push(direct);
    await migrateClickHouse(direct);
    chProxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(ch.url).port) });
    const throughProxy = new URL(ch.url); // keeps the credentials and the database
    throughProxy.port = String(chProxy.port);
    const cut = connectClickHouse(throughProxy.toString());
    clients.push(cut);
    await chProxy.cut();
    const config = loadApiConfig({});
    for (const clickhouse of [cut, direct]) {
      // Counters not kept: each read asks ClickHouse.
      const counters = clickHouseLinkCounters(clickhouse, logger, { maxAgeMs: 0 });
      apis.push(await listen(createApiApp({ sql: db.sql, config, logger, secret, bus: createMemoryBus(), analytics: clickhouse, counters }), 0, '127.0.0.1'));
    }
    const ws = await createWorkspace(db.sql, { name: 'replayed headers', plan: 'enterprise' });
    key = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
  });
  afterAll(async () => {
    for (const api of apis) await api.close();
    for (const client of clients) await client.close();
    await chProxy?.close();
    await ch?.close();
    await db?.close();
  });

  async function send(instance: number, method: string, path: string, body: unknown, idem?: string): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    if (idem !== undefined) headers['idempotency-key'] = idem;
    const res = await fetch(apis[instance]!.url + path, { method, headers, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text), text, headers: res.headers };
  }
  const idem = () => `hdr-${randomBytes(8).toString('hex')}`;
  const storedHeaders = async (k: string) =>
    (await db.sql<{ responseHeaders: string | null }[]>`SELECT response_headers FROM idempotency_keys WHERE key = ${k}`)[0]!.responseHeaders;
  /** A new link (made where ClickHouse answers) and the two PATCHes that answer with its counters. */
  async function patchesOfNewLink(title: string) {
    const link = (await send(1, 'POST', '/links', { destinationUrl: `https://example.com/${encodeURIComponent(title)}` })).body.data;
    return [
      [`/links/${link.id}`, { title }],
      ['/links/bulk', { ids: [link.id], patch: { title: `bulk ${title}` } }],
    ] as const;
  }

  it('a PATCH whose counters were unavailable replays with X-Linkroute-Counters: unavailable, from an instance that reaches ClickHouse too', async () => {
    for (const [path, body] of await patchesOfNewLink('counted?')) {
      const k = idem();
      const first = await send(0, 'PATCH', path, body, k);
      expect([first.status, first.headers.get('x-linkroute-counters')], path).toEqual([200, 'unavailable']);
      for (const instance of [1, 0]) {
        const replay = await send(instance, 'PATCH', path, body, k);
        expect(replay.headers.get('idempotent-replayed'), path).toBe('true');
        expect(replay.text, path).toBe(first.text);
        expect({ path, instance, counters: replay.headers.get('x-linkroute-counters') }).toEqual({ path, instance, counters: 'unavailable' });
        // The rate limit's headers are the replay's own, not the first answer's.
        expect(replay.headers.get('x-ratelimit-remaining'), path).not.toBe(first.headers.get('x-ratelimit-remaining'));
      }
      // Sealed like the body: a database dump does not read them.
      const row = await storedHeaders(k);
      expect(looksSealed(row!), path).toBe(true);
      expect(row, path).not.toContain('unavailable');
    }
  });

  it('an answer whose counters were read replays without the header, also where ClickHouse is cut; none is stored', async () => {
    for (const [path, body] of await patchesOfNewLink('counted')) {
      const k = idem();
      const first = await send(1, 'PATCH', path, body, k);
      expect([first.status, first.headers.get('x-linkroute-counters')], path).toEqual([200, null]);
      const replay = await send(0, 'PATCH', path, body, k);
      expect([replay.headers.get('idempotent-replayed'), replay.headers.get('x-linkroute-counters'), replay.text], path).toEqual(['true', null, first.text]);
      expect(await storedHeaders(k), path).toBeNull();
    }
  });

  it('repeats only the headers that describe the body, kept plain without LINKROUTE_SECRET; an answer stored without headers replays with none', async () => {
    const workspace = await createWorkspace(db.sql, { name: 'header list', plan: 'enterprise' });
    for (const withSecret of [true, false]) {
      const withIdempotency = idempotency(db.sql, logger, withSecret ? secret : undefined);
      let runs = 0;
      const app = new Koa();
      app.use(errorHandler(logger));
      app.use((ctx, next) =>
        withIdempotency(ctx, { workspaceId: workspace.id, keyId: 'key_test' }, async () => {
          runs++;
          ctx.set('X-Linkroute-Counters', 'unavailable');
          ctx.set('X-Not-The-Answers', `run ${runs}`);
          ctx.status = 200;
          ctx.body = { success: true, data: { run: runs } };
          await next();
        }),
      );
      const server = await listen(app, 0, '127.0.0.1');
      try {
        const post = async (k: string) => {
          const res = await fetch(`${server.url}/thing`, { method: 'POST', headers: { 'idempotency-key': k } });
          return { text: await res.text(), counters: res.headers.get('x-linkroute-counters'), other: res.headers.get('x-not-the-answers'), replayed: res.headers.get('idempotent-replayed') };
        };
        const k = idem();
        const first = await post(k);
        expect(first).toEqual({ text: '{"success":true,"data":{"run":1}}', counters: 'unavailable', other: 'run 1', replayed: null });
        expect(await post(k), `secret: ${withSecret}`).toEqual({ text: first.text, counters: 'unavailable', other: null, replayed: 'true' });
        const row = await storedHeaders(k);
        if (withSecret) expect(looksSealed(row!)).toBe(true);
        else expect(JSON.parse(row!)).toEqual({ 'x-linkroute-counters': 'unavailable' });

        // As stored before answers kept headers: the body alone.
        await db.sql`UPDATE idempotency_keys SET response_headers = NULL WHERE key = ${k}`;
        expect(await post(k)).toEqual({ text: first.text, counters: null, other: null, replayed: 'true' });
        expect(runs).toBe(1);
      } finally {
        await server.close();
      }
    }
  });
});

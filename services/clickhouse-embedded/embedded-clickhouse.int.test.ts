import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseError, createClient, type ClickHouseClient } from '@clickhouse/client';
import { createLogger } from '../../shared/logger.ts';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from './embedded-clickhouse.ts';

// Everything goes through @clickhouse/client, as the rest of linkroute does.
/** The client logs every failed request at ERROR; these tests fail requests on purpose. */
class SilentLogger {
  trace(): void {}
  debug(): void {}
  info(): void {}
  warn(): void {}
  error(): void {}
}

/** The HTTP Basic header of the credentials in `ch.url`. */
const basicAuth = (ch: EmbeddedClickHouse) => {
  const u = new URL(ch.url);
  return { authorization: `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}` };
};
const quiet = createLogger('clickhouse-embedded-test', 'silent');
const silentClientLog = { log: { LoggerClass: SilentLogger } };

describe('embedded ClickHouse over the HTTP interface', () => {
  let ch: EmbeddedClickHouse;
  let client: ClickHouseClient;

  beforeAll(async () => {
    ch = await startEmbeddedClickHouse({ logger: quiet });
    client = createClient({ url: ch.url, ...silentClientLog });
  });

  afterAll(async () => {
    await client?.close();
    await ch?.stop();
  });

  it('answers ping, both the client call and the raw endpoint', async () => {
    expect(await client.ping()).toEqual({ success: true });
    const res = await fetch(`${ch.address}/ping`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('Ok.\n');
  });

  it('runs no statement without the password: 403 AUTHENTICATION_FAILED, however the credentials come', async () => {
    const query = encodeURIComponent('SELECT 1');
    const password = new URL(ch.url).password;
    const refused = [
      await fetch(`${ch.address}/?query=${query}`),
      await fetch(`${ch.address}/`, { method: 'POST', body: 'SELECT 1' }),
      await fetch(`${ch.address}/?query=${query}`, { headers: { authorization: `Basic ${Buffer.from('default:wrong').toString('base64')}` } }),
      await fetch(`${ch.address}/?query=${query}`, { headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` } }),
      await fetch(`${ch.address}/?query=${query}`, { headers: { 'x-clickhouse-user': 'default', 'x-clickhouse-key': 'wrong' } }),
      await fetch(`${ch.address}/?query=${query}&user=default&password=wrong`),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.headers.get('x-clickhouse-exception-code')).toBe('516');
      expect(await res.text()).toMatch(/\(AUTHENTICATION_FAILED\)/);
    }
    const stranger = createClient({ url: ch.address, ...silentClientLog });
    await expect(stranger.query({ query: 'SELECT 1' })).rejects.toMatchObject({ type: 'AUTHENTICATION_FAILED' });
    await stranger.close();
    for (const init of [{ headers: basicAuth(ch) }, { headers: { 'x-clickhouse-user': 'default', 'x-clickhouse-key': password } }]) {
      const ok = await fetch(`${ch.address}/?query=${query}`, init);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe('1\n');
    }
    expect((await fetch(`${ch.address}/?query=${query}&user=default&password=${password}`)).status).toBe(200);
  });

  it('runs DDL, inserts JSONEachRow objects and reads them back in every format', async () => {
    await client.command({
      query: `CREATE TABLE events (id UInt64, link String, country LowCardinality(String), ts DateTime64(3))
              ENGINE = MergeTree ORDER BY (link, ts)`,
    });
    const inserted = await client.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: [
        { id: 1, link: 'a', country: 'DE', ts: '2024-05-06 07:08:09.123' },
        { id: 2, link: 'b', country: 'US', ts: '2024-05-06 07:08:10.000' },
      ],
    });
    expect(inserted.executed).toBe(true);
    expect(inserted.summary?.written_rows).toBe('2');

    const json = await (await client.query({ query: 'SELECT id, link, ts FROM events ORDER BY id', format: 'JSON' })).json<{ id: number; link: string; ts: string }>();
    expect(json.data).toEqual([
      { id: 1, link: 'a', ts: '2024-05-06 07:08:09.123' },
      { id: 2, link: 'b', ts: '2024-05-06 07:08:10.000' },
    ]);
    expect(json.meta?.map((m) => m.type)).toEqual(['UInt64', 'String', "DateTime64(3)"]);

    const rows = await (await client.query({ query: 'SELECT link, country FROM events ORDER BY id', format: 'JSONEachRow' })).json();
    expect(rows).toEqual([{ link: 'a', country: 'DE' }, { link: 'b', country: 'US' }]);
    const compact = await (await client.query({ query: 'SELECT id, link FROM events ORDER BY id', format: 'JSONCompactEachRow' })).json();
    expect(compact).toEqual([[1, 'a'], [2, 'b']]);
    expect(await (await client.query({ query: 'SELECT id, link FROM events ORDER BY id', format: 'CSV' })).text()).toBe('1,"a"\n2,"b"\n');
    expect(await (await client.query({ query: 'SELECT id, link FROM events ORDER BY id', format: 'TabSeparated' })).text()).toBe('1\ta\n2\tb\n');

    // The client's default insert format, and a stream of rows.
    await client.insert({ table: 'events', values: [[3, 'c', 'FR', '2024-05-06 07:08:11.000']], columns: ['id', 'link', 'country', 'ts'] });
    const stream = Readable.from([{ id: 4, link: 'd', country: 'FR', ts: '2024-05-06 07:08:12.000' }, { id: 5, link: 'e', country: 'FR', ts: '2024-05-06 07:08:13.000' }]);
    await client.insert({ table: 'events', values: stream, format: 'JSONEachRow' });
    expect(await count(client, 'events')).toBe(5);
  });

  it('binds query parameters by type, and a String parameter cannot inject SQL', async () => {
    const tricky = "it's a \\back\\slash\", a tab\t, a newline\n and 'quotes'";
    const injection = "x'); DROP TABLE events; --";
    const rs = await client.query({
      query: `SELECT {s:String} AS s, {inj:String} AS inj, {n:UInt64} AS n, {ts:DateTime64(3)} AS ts,
                     {when:DateTime64(3)} AS when, {tags:Array(String)} AS tags,
                     (SELECT count() FROM events WHERE link = {inj:String}) AS matched`,
      format: 'JSONEachRow',
      query_params: {
        s: tricky,
        inj: injection,
        n: '18446744073709551615',
        ts: '2024-05-06 07:08:09.123',
        when: new Date('2024-05-06T07:08:09.456Z'),
        tags: ["o'brien", 'back\\slash', 'plain'],
      },
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    });
    const [row] = await rs.json<Record<string, unknown>>();
    expect(row).toEqual({
      s: tricky,
      inj: injection,
      n: '18446744073709551615',
      ts: '2024-05-06 07:08:09.123',
      when: '2024-05-06 07:08:09.456',
      tags: ["o'brien", 'back\\slash', 'plain'],
      matched: '0',
    });
    expect(await count(client, 'events')).toBe(5); // still there
  });

  it('surfaces engine errors as ClickHouseError with the real code and status, and keeps serving', async () => {
    const syntax = await client.query({ query: 'SELEC 1' }).catch((e: unknown) => e);
    expect(syntax).toBeInstanceOf(ClickHouseError);
    expect(syntax).toMatchObject({ code: '62', type: 'SYNTAX_ERROR' });
    expect((syntax as Error).message).toMatch(/^Syntax error: failed at position 7/);

    const unknown = await client.query({ query: 'SELECT * FROM no_such_table' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ClickHouseError);
    expect(unknown).toMatchObject({ code: '60', type: 'UNKNOWN_TABLE' });

    const raw = await fetch(`${ch.address}/?query=${encodeURIComponent('SELECT * FROM no_such_table')}`, { headers: basicAuth(ch) });
    expect(raw.status).toBe(404);
    expect(raw.headers.get('x-clickhouse-exception-code')).toBe('60');
    expect(await raw.text()).toMatch(/^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\)/);

    // A query failing after it produced rows must not leave them for the next query (chDB would).
    const midway = await client.query({ query: 'SELECT throwIf(number = 5) AS x FROM numbers(10) SETTINGS max_block_size = 1', format: 'JSONEachRow' }).catch((e: unknown) => e);
    expect(midway).toMatchObject({ code: '395', type: 'FUNCTION_THROW_IF_VALUE_IS_NON_ZERO' });
    expect(await (await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })).json()).toEqual([{ one: 1 }]);

    const badInsert = await client.insert({ table: 'events', format: 'JSONEachRow', values: [{ id: 'not a number' }] }).catch((e: unknown) => e);
    expect(badInsert).toBeInstanceOf(ClickHouseError);
    expect(await count(client, 'events')).toBe(5);
  });

  it('makes an insert retried with the same insert_deduplication_token a no-op', async () => {
    await client.command({
      query: `CREATE TABLE clicks (id String, n UInt32) ENGINE = MergeTree ORDER BY id
              SETTINGS non_replicated_deduplication_window = 1000`,
    });
    const batch = [{ id: 'a', n: 1 }, { id: 'b', n: 2 }];
    const settings = { insert_deduplication_token: 'batch-1' };
    await client.insert({ table: 'clicks', format: 'JSONEachRow', values: batch, clickhouse_settings: settings });
    await client.insert({ table: 'clicks', format: 'JSONEachRow', values: batch, clickhouse_settings: settings });
    expect(await count(client, 'clicks')).toBe(2);
    // The token applied to those inserts only: a different batch after them is kept.
    await client.insert({ table: 'clicks', format: 'JSONEachRow', values: [{ id: 'c', n: 3 }] });
    expect(await count(client, 'clicks')).toBe(3);
  });

  it('applies settings to their own request only, and ignores settings the engine does not know', async () => {
    const blockSize = (settings?: Record<string, unknown>) =>
      client
        .query({ query: "SELECT getSetting('max_block_size') AS b", format: 'JSONEachRow', clickhouse_settings: settings as never })
        .then((rs) => rs.json<{ b: number }>())
        .then(([r]) => Number(r!.b));
    const base = await blockSize();
    expect(await blockSize({ max_block_size: 1234, wait_end_of_query: 1, some_future_setting: 1 })).toBe(1234);
    expect(await blockSize()).toBe(base);
  });

  it('completes 20 concurrent queries, each with its own parameters and settings', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client
          .query({
            query: "SELECT {i:UInt32} AS i, getSetting('max_block_size') AS b, (SELECT count() FROM events) AS c",
            format: 'JSONEachRow',
            query_params: { i },
            clickhouse_settings: { max_block_size: String(1000 + i) },
          })
          .then((rs) => rs.json<{ i: number; b: number; c: number }>()),
      ),
    );
    expect(results.map(([r]) => [r!.i, Number(r!.b), Number(r!.c)])).toEqual(Array.from({ length: 20 }, (_, i) => [i, 1000 + i, 5]));
  });

  it('uses the database of the request, without leaking it to other requests', async () => {
    await client.command({ query: 'CREATE DATABASE other' });
    await client.command({ query: 'CREATE TABLE other.only_here (x UInt8) ENGINE = MergeTree ORDER BY x' });
    const other = createClient({ url: ch.url, database: 'other', ...silentClientLog });
    try {
      await other.insert({ table: 'only_here', format: 'JSONEachRow', values: [{ x: 7 }] });
      const rows = await (await other.query({ query: 'SELECT x, currentDatabase() AS db FROM only_here', format: 'JSONEachRow' })).json();
      expect(rows).toEqual([{ x: 7, db: 'other' }]);
      const mine = await (await client.query({ query: 'SELECT currentDatabase() AS db', format: 'JSONEachRow' })).json();
      expect(mine).toEqual([{ db: 'default' }]);
    } finally {
      await other.close();
    }
  });

  it('speaks gzip both ways and takes parameters from a multipart body', async () => {
    const gz = createClient({ url: ch.url, compression: { request: true, response: true }, ...silentClientLog });
    try {
      await gz.insert({ table: 'clicks', format: 'JSONEachRow', values: [{ id: 'gz', n: 9 }] });
      const rs = await gz.query({ query: "SELECT n FROM clicks WHERE id = 'gz'", format: 'JSONEachRow' });
      expect(rs.response_headers['content-encoding']).toBe('gzip');
      expect(await rs.json()).toEqual([{ n: 9 }]);
      const ids = Array.from({ length: 600 }, (_, i) => `id-${i}-${'x'.repeat(8)}`).concat('gz');
      const multipart = await gz.query({
        query: 'SELECT count() AS c FROM clicks WHERE id IN {ids:Array(String)}',
        format: 'JSONEachRow',
        query_params: { ids },
        use_multipart_params: true,
      });
      expect(await multipart.json()).toEqual([{ c: 1 }]);
    } finally {
      await gz.close();
    }
  });

  it('runs exec() statements and INSERT ... SELECT', async () => {
    await client.command({ query: 'CREATE TABLE copy (id String, n UInt32) ENGINE = MergeTree ORDER BY id' });
    await client.exec({ query: 'INSERT INTO copy SELECT id, n FROM clicks' });
    const res = await client.exec({ query: 'SELECT count() FROM copy FORMAT TabSeparated' });
    const text = await new Response(Readable.toWeb(res.stream) as ReadableStream).text();
    expect(Number(text.trim())).toBe(await count(client, 'clicks'));
  });

  it('inserts 100k rows in one batch', async () => {
    await client.command({
      query: `CREATE TABLE bulk (id UInt64, ws UInt32, link String, country LowCardinality(String), ts DateTime64(3))
              ENGINE = MergeTree ORDER BY (ws, link, ts)`,
    });
    const now = Date.UTC(2024, 4, 6);
    const values = Array.from({ length: 100_000 }, (_, i) => ({ id: i, ws: i % 10, link: `l${i % 500}`, country: i % 2 ? 'DE' : 'US', ts: now + i }));
    const started = performance.now();
    await client.insert({ table: 'bulk', format: 'JSONEachRow', values });
    const ms = performance.now() - started;
    console.info(`100k-row JSONEachRow insert through @clickhouse/client: ${ms.toFixed(0)} ms`);
    expect(await count(client, 'bulk')).toBe(100_000);
  });

  it('stays responsive while a long query runs, and a query whose client gives up is killed', async () => {
    // ~1 s of engine time (sleepEachRow sleeps per row; one row per block).
    const long = client.query({ query: 'SELECT sleepEachRow(0.25) FROM numbers(4) SETTINGS max_block_size = 1', format: 'JSONEachRow' });
    let longDone = false;
    void long.then(() => (longDone = true));
    await sleep(100);
    // Answered while the long query still runs (an order of events, not a time: a busy
    // machine may take a while for both).
    const ping = await fetch(`${ch.address}/ping`);
    expect(await ping.text()).toBe('Ok.\n');
    expect(longDone).toBe(false);
    expect(await (await long).json()).toHaveLength(4);

    // 30 s unless killed: aborting the request must free the engine for the next query at once.
    const abort = new AbortController();
    const doomed = client.query({ query: 'SELECT sleepEachRow(0.5) FROM numbers(60) SETTINGS max_block_size = 1', abort_signal: abort.signal }).catch((e: unknown) => e);
    await sleep(300);
    abort.abort();
    expect(await doomed).toBeInstanceOf(Error);
    const after = performance.now();
    expect(await (await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })).json()).toEqual([{ one: 1 }]);
    expect(performance.now() - after).toBeLessThan(2000);
  });
});

describe('embedded ClickHouse with a data directory', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'linkroute-chdb-test-'));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps its data across stop and start', async () => {
    const first = await startEmbeddedClickHouse({ dataDir: dir, logger: quiet });
    const c1 = createClient({ url: first.url, ...silentClientLog });
    await c1.command({ query: 'CREATE TABLE kept (id UInt32) ENGINE = MergeTree ORDER BY id' });
    await c1.insert({ table: 'kept', format: 'JSONEachRow', values: [{ id: 1 }, { id: 2 }, { id: 3 }] });
    await c1.close();
    await first.stop();

    const second = await startEmbeddedClickHouse({ dataDir: dir, logger: quiet });
    const c2 = createClient({ url: second.url, ...silentClientLog });
    try {
      expect(await count(c2, 'kept')).toBe(3);
      // Nothing in the data directory is writable by group or others, and only the owner may enter it.
      const loose: string[] = [];
      for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
        const path = join(entry.parentPath, entry.name);
        if ((await stat(path)).mode & 0o022) loose.push(path);
      }
      expect(loose).toEqual([]);
      expect((await stat(dir)).mode & 0o077).toBe(0);
    } finally {
      await c2.close();
      await second.stop();
    }
  });

  it('stop() ends a running query instead of waiting for it', async () => {
    const ch = await startEmbeddedClickHouse({ dataDir: dir, logger: quiet });
    const c = createClient({ url: ch.url, ...silentClientLog });
    const running = c.query({ query: 'SELECT sleepEachRow(0.5) FROM numbers(60) SETTINGS max_block_size = 1' }).catch((e: unknown) => e);
    await sleep(300);
    const started = performance.now();
    await ch.stop();
    expect(performance.now() - started).toBeLessThan(3000);
    expect(await running).toBeInstanceOf(Error);
    await c.close();
  });
});

async function count(client: ClickHouseClient, table: string): Promise<number> {
  const rows = await (await client.query({ query: `SELECT count() AS c FROM ${table}`, format: 'JSONEachRow' })).json<{ c: number | string }>();
  return Number(rows[0]!.c);
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createLogger } from '../../shared/logger.ts';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from './embedded-clickhouse.ts';

class SilentLogger {
  trace(): void {}
  debug(): void {}
  info(): void {}
  warn(): void {}
  error(): void {}
}

/**
 * Inserts the endpoint hands to the engine through a spool file (insert-from-file.ts)
 * must mean what the same INSERT with inline data means on a server.
 */
describe('embedded ClickHouse: inserts read from a spool file', () => {
  let dir: string;
  let ch: EmbeddedClickHouse;
  let client: ClickHouseClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'linkroute-spool-test-'));
    ch = await startEmbeddedClickHouse({ dataDir: dir, logger: createLogger('spool-test', 'silent') });
    client = createClient({ url: ch.url, log: { LoggerClass: SilentLogger } });
    await client.command({
      query: `CREATE TABLE t (id String, n UInt8, d String DEFAULT concat(id, '!'), at DateTime DEFAULT now())
              ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100`,
    });
    await client.command({ query: 'CREATE TABLE per_id (id String, rows UInt64) ENGINE = SummingMergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100' });
    await client.command({ query: 'CREATE MATERIALIZED VIEW per_id_mv TO per_id AS SELECT id, count() AS rows FROM t GROUP BY id' });
  });

  afterAll(async () => {
    await client?.close();
    await ch?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const rows = async (sql: string) => (await client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>();
  const rowBinary = (id: string, n: number) => Buffer.concat([Buffer.from([id.length]), Buffer.from(id, 'latin1'), Buffer.from([n])]);
  const execInsert = async (query: string, body: Buffer, settings: Record<string, string> = {}) => {
    const res = await client.exec({ query, values: Readable.from([body], { objectMode: false }), clickhouse_settings: settings });
    res.stream.resume();
    return res;
  };

  it('fills defaults, feeds views, and reports rows written', async () => {
    const res = await client.insert({ table: 't', values: [{ id: 'json', n: 1 }], format: 'JSONEachRow' });
    expect(res.summary?.written_rows).toBe('2'); // the row and its view's row
    await client.insert({ table: 't', values: [['tsv', 2]], format: 'JSONCompactEachRow', columns: ['id', 'n'] });
    expect(await rows("SELECT id, n, d, at > now() - 600 AS recent FROM t WHERE id IN ('json', 'tsv') ORDER BY id")).toEqual([
      { id: 'json', n: 1, d: 'json!', recent: 1 },
      { id: 'tsv', n: 2, d: 'tsv!', recent: 1 },
    ]);
    expect(await rows("SELECT id, sum(rows) AS r FROM per_id WHERE id IN ('json', 'tsv') GROUP BY id ORDER BY id")).toEqual([
      { id: 'json', r: 1 },
      { id: 'tsv', r: 1 },
    ]);
  });

  it('takes binary data whose bytes look like whitespace', async () => {
    // Lengths 9, 10, 13 and 32 are a tab, a newline, a carriage return and a space.
    const body = Buffer.concat([rowBinary('\t'.repeat(9), 32), rowBinary(' '.repeat(10), 10), rowBinary('x'.repeat(13), 9), rowBinary(' '.repeat(32), 13)]);
    await execInsert('INSERT INTO t (id, n) FORMAT RowBinary', body);
    expect(await rows("SELECT length(id) AS len, n FROM t WHERE trim(BOTH ' \t' FROM id) = '' OR id = 'xxxxxxxxxxxxx' ORDER BY len")).toEqual([
      { len: 9, n: 32 },
      { len: 10, n: 10 },
      { len: 13, n: 9 },
      { len: 32, n: 13 },
    ]);
    // A body of one space byte is a row in a binary format.
    await execInsert('INSERT INTO t (n) FORMAT RowBinary', Buffer.from([32]));
    expect(await rows("SELECT n FROM t WHERE id = ''")).toEqual([{ n: 32 }]);
  });

  it('drops a repeated insert as a server does: by content without a token, by token with one', async () => {
    const body = Buffer.concat([rowBinary('same-a', 1), rowBinary('same-b', 2)]);
    await execInsert('INSERT INTO t (id, n) FORMAT RowBinary', body);
    await execInsert('INSERT INTO t (id, n) FORMAT RowBinary', Buffer.from(body));
    const token = { insert_deduplication_token: 'batch-7' };
    await execInsert('INSERT INTO t (id, n) FORMAT RowBinary', rowBinary('tok-a', 1), token);
    await execInsert('INSERT INTO t (id, n) FORMAT RowBinary', rowBinary('tok-b', 1), token);
    expect(await rows("SELECT id, count() AS c FROM t WHERE id LIKE 'same-%' OR id LIKE 'tok-%' GROUP BY id ORDER BY id")).toEqual([
      { id: 'same-a', c: 1 },
      { id: 'same-b', c: 1 },
      { id: 'tok-a', c: 1 },
    ]);
    expect(await rows("SELECT sum(rows) AS r FROM per_id WHERE id LIKE 'same-%' OR id LIKE 'tok-%'")).toEqual([{ r: 3 }]);
  });

  it('stores nothing from a batch with a bad row, and leaves no spool file behind', async () => {
    const failed = await client.insert({ table: 't', format: 'JSONEachRow', values: [{ id: 'bad-1', n: 1 }, { id: 'bad-2', n: 'x' }] }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(await rows("SELECT count() AS c FROM t WHERE id LIKE 'bad-%'")).toEqual([{ c: 0 }]);
    expect(await readdir(join(dir, 'insert-spool'))).toEqual([]);
  });

  it('keeps statements of another shape on the inline path', async () => {
    await execInsert('INSERT INTO t (id, n) SETTINGS input_format_skip_unknown_fields = 1 FORMAT JSONEachRow', Buffer.from('{"id":"inline","n":4,"x":1}\n'));
    expect(await rows("SELECT n FROM t WHERE id = 'inline'")).toEqual([{ n: 4 }]);
  });
});

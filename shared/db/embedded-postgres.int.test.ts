import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { connect as connectSocket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../testing/run-command.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';
import { connectPostgres, unixSocketOf, type Sql } from './postgres.ts';

/** Every file and directory under `dir` whose mode lets group or others write. */
async function writableByOthers(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if ((await stat(path)).mode & 0o022) found.push(path);
  }
  return found;
}

describe('embedded Postgres on a data dir', () => {
  let dataDir: string;
  let pg: EmbeddedPostgres;
  const clients: Sql[] = [];
  const connect = () => {
    const sql = connectPostgres(pg.url, { max: 1 });
    clients.push(sql);
    return sql;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-embedded-pg-'));
    pg = await startEmbeddedPostgres({ dataDir });
    await connect()`CREATE TABLE t (id int PRIMARY KEY, v text)`;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((sql) => sql.end({ timeout: 1 })));
    await pg?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves concurrent connections (transactions beside single statements) without mixing their request cycles', async () => {
    // Before the session queue, a Sync from one connection dropped another's unnamed portal:
    // about a third of these failed with `portal "" does not exist`.
    const [a, b] = [connect(), connect()];
    const failures: string[] = [];
    let done = 0;
    const transactions = async (sql: Sql, from: number) => {
      for (let i = from; i < from + 60; i++) {
        await sql
          .begin(async (tx) => {
            await tx`INSERT INTO t ${tx({ id: i, v: `v${i}` })}`;
            const [row] = await tx`SELECT v FROM t WHERE id = ${i}`;
            if (row?.v !== `v${i}`) failures.push(`read back ${String(row?.v)} for ${i}`);
          })
          .then(() => done++, (err: Error) => failures.push(err.message));
      }
    };
    const reads = async (sql: Sql) => {
      for (let i = 0; i < 120; i++) await sql`SELECT count(*)::int AS n FROM t WHERE v = ${`x${i}`}`.then(() => done++, (err: Error) => failures.push(err.message));
    };
    await Promise.all([transactions(a, 0), transactions(b, 1000), reads(a), reads(b)]);
    expect(failures).toEqual([]);
    expect(done).toBe(360);
    const [{ n }] = (await a`SELECT count(*)::int AS n FROM t`) as unknown as [{ n: number }];
    expect(n).toBe(120);
  }, 120_000);

  it('rolls back the transaction of a connection that goes away, and serves the others', async () => {
    const quitter = connectPostgres(pg.url, { max: 1 });
    let inside!: () => void;
    const began = new Promise<void>((r) => (inside = r));
    const abandoned = quitter
      .begin(async (tx) => {
        await tx`INSERT INTO t (id, v) VALUES (5000, 'abandoned')`;
        inside();
        await new Promise(() => {}); // never commits
      })
      .catch((err: Error) => err);
    await began;
    await quitter.end({ timeout: 0 }); // closes the socket mid-transaction
    expect(await abandoned).toBeInstanceOf(Error);
    const other = connect();
    expect(await other`SELECT id FROM t WHERE id = 5000`).toHaveLength(0);
    await other`INSERT INTO t (id, v) VALUES (5001, 'after')`;
    expect(await other`SELECT id FROM t WHERE id = 5001`).toHaveLength(1);
  }, 60_000);

  it('answers SSL and GSS encryption requests with N and drops a cancel request, as a server without them does', async () => {
    const socket = connectSocket(unixSocketOf(pg.url).path!);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const request = (code: number) => {
      const b = Buffer.alloc(8);
      b.writeInt32BE(8, 0);
      b.writeInt32BE(code, 4);
      return b;
    };
    const answer = () => new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString())));
    const ssl = answer();
    socket.write(request(80877103));
    expect(await ssl).toBe('N');
    const gss = answer();
    socket.write(request(80877104));
    expect(await gss).toBe('N');
    socket.destroy();
    // A client's cancel request (postgres.js sends one on a query timeout) arrives on a connection of its own.
    const canceller = connectSocket(unixSocketOf(pg.url).path!);
    const ended = new Promise<void>((resolve) => canceller.once('close', () => resolve()));
    const cancel = Buffer.alloc(16);
    cancel.writeInt32BE(16, 0);
    cancel.writeInt32BE(80877102, 4);
    canceller.write(cancel);
    await ended;
    expect(await connect()`SELECT 40 + 2 AS n`).toEqual([{ n: 42 }]);
  });

  it('listens only on a Unix socket in an owner-only directory: another local user cannot connect', async () => {
    const socket = unixSocketOf(pg.url).path!;
    expect(socket).toMatch(/\.s\.PGSQL\.5432$/);
    expect(pg.url).not.toMatch(/127\.0\.0\.1|:\d+\//);
    expect((await stat(join(socket, '..'))).mode & 0o777).toBe(0o700);
    expect((await stat(socket)).isSocket()).toBe(true);
    if (process.getuid?.() !== 0) return; // only root can act as another user here
    const probe = `require('node:net').connect(${JSON.stringify(socket)}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); })`;
    const asNobody = await runCommand('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', probe]);
    expect(asNobody.stdout.trim(), asNobody.stderr).toBe('EACCES');
    const asOwner = await runCommand(process.execPath, ['-e', probe]);
    expect(asOwner.stdout.trim()).toBe('connected');
  }, 60_000);

  it('leaves no file in its data dir that group or others can write', async () => {
    await connect()`CREATE TABLE later (id int)`; // files Postgres makes at run time too
    expect(await writableByOthers(dataDir)).toEqual([]);
    expect((await stat(join(dataDir, 'embedded-postgres.json'))).mode & 0o077).toBe(0);
  });
});

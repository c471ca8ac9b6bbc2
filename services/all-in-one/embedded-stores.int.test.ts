/**
 * `npm start`'s embedded stores as another local user and as an operator meet them:
 * what is open without credentials, file modes in DATA_DIR, and the CLI beside the
 * running instance (concurrently with API traffic, and pointed at the wrong DATA_DIR).
 */
import { access, mkdtemp, readFile, readdir, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../shared/db/postgres.ts';
import { runCommand } from '../../shared/testing/run-command.ts';
import { npmStart, stopNpmStart, type NpmStart } from '../../shared/testing/npm-start.ts';

describe('npm start: embedded stores', () => {
  let dataDir: string;
  let otherDir: string;
  let running: NpmStart;
  let key: string;
  let workspaceId: string;
  const cli = (env: Record<string, string>, cwd: string, ...args: string[]) =>
    runCommand('node', [join(process.cwd(), 'dist/services/cli/main.js'), ...args], { env: { DATABASE_URL: '', ...env }, cwd, timeoutMs: 120_000 });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-stores-'));
    otherDir = await mkdtemp(join(tmpdir(), 'linkroute-elsewhere-'));
    running = await npmStart({ DATA_DIR: dataDir });
    key = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(running.output())![1]!;
    workspaceId = /Created workspace (ws_\w+)/.exec(running.output())![1]!;
  }, 120_000);
  afterAll(async () => {
    if (running) await stopNpmStart(running);
    for (const dir of [dataDir, otherDir]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('leaves nothing in DATA_DIR that group or others can write, and keeps its secrets owner-only', async () => {
    const loose: string[] = [];
    for (const entry of await readdir(dataDir, { withFileTypes: true, recursive: true })) {
      const path = join(entry.parentPath, entry.name);
      if ((await stat(path)).mode & 0o022) loose.push(path);
    }
    expect(loose).toEqual([]);
    for (const file of ['secret', 'clickhouse-password', 'embedded-postgres.json']) expect((await stat(join(dataDir, file))).mode & 0o077, file).toBe(0);
    for (const dir of ['postgres', 'run', 'clickhouse']) expect((await stat(join(dataDir, dir))).mode & 0o077, dir).toBe(0);
  });

  it('embedded ClickHouse: no statement without the password; embedded Postgres: no TCP port at all', async () => {
    const address = /embedded chDB in \S+ on (http:\/\/127\.0\.0\.1:\d+)/.exec(running.output())?.[1];
    expect(address, running.output()).toBeDefined();
    const anonymous = await fetch(`${address}/?query=${encodeURIComponent('SELECT count() FROM system.tables')}`);
    expect(anonymous.status).toBe(403);
    expect(await anonymous.text()).toMatch(/AUTHENTICATION_FAILED/);
    const wrong = await fetch(`${address}/?query=SELECT%201`, { headers: { authorization: `Basic ${Buffer.from('default:guess').toString('base64')}` } });
    expect(wrong.status).toBe(403);
    // Postgres: the socket in the owner-only run directory, and no TCP port of the process speaks Postgres.
    expect((await stat(join(dataDir, 'run', '.s.PGSQL.5432'))).isSocket()).toBe(true);
    const listening = await listeningPorts(running.nodePid);
    expect(listening).toContain(Number(new URL(running.url).port));
    for (const port of listening) {
      const sql = connectPostgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1 });
      const answer = await Promise.race([
        sql`SELECT 1 AS one`.then(() => 'postgres answered', (err: Error) => `refused: ${err.message}`),
        new Promise<string>((r) => setTimeout(() => r('refused: no answer'), 5_000)),
      ]);
      expect(answer, `port ${port}`).toMatch(/^refused/);
      await sql.end({ timeout: 0 });
    }
  }, 120_000);

  it('CLI commands beside the running service and its API traffic all succeed', async () => {
    let stop = false;
    let apiCalls = 0;
    const traffic = (async () => {
      while (!stop) {
        const res = await fetch(`${running.url}/links`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        apiCalls++;
      }
    })();
    const runs = await Promise.all(Array.from({ length: 4 }, () => cli({ DATA_DIR: dataDir }, process.cwd(), 'key', 'create', '--workspace', workspaceId, '--json')));
    stop = true;
    await traffic;
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    expect(apiCalls).toBeGreaterThan(0);
    const keys = runs.map((r) => (JSON.parse(r.stdout) as { apiKey: string }).apiKey);
    for (const k of keys) expect((await fetch(`${running.url}/links`, { headers: { authorization: `Bearer ${k}` } })).status).toBe(200);
  }, 240_000);

  it('CLI without DATA_DIR elsewhere: names the database it looked for and creates none', async () => {
    const res = await cli({ DATA_DIR: '' }, otherDir, 'key', 'create', '--workspace', workspaceId);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`error: no linkroute database in ${join(otherDir, 'data', 'postgres')}`);
    expect(res.stderr).not.toMatch(/workspace.*not found/i);
    await expect(access(join(otherDir, 'data'))).rejects.toMatchObject({ code: 'ENOENT' });
    // A failing command on the right database says which one answered.
    const missing = await cli({ DATA_DIR: dataDir }, process.cwd(), 'key', 'create', '--workspace', 'ws_missing');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`(database: embedded Postgres in ${join(dataDir, 'postgres')}, served by process ${running.nodePid})`);
  }, 120_000);
});

/** TCP ports `pid` listens on, from /proc (its sockets' inodes matched against /proc/net/tcp{,6}). */
async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = await readlink(`/proc/${pid}/fd/${fd}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // closed meanwhile
      throw err;
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A' && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16)); // 0A: LISTEN
    }
  }
  return [...ports];
}

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * Embedded Postgres: PGlite served on a loopback port by pglite-socket, so every
 * component keeps speaking postgres.js exactly as against a real server.
 *
 * PGlite is a single session. pglite-socket multiplexes connections onto it and
 * keeps a transaction on the connection that opened it, but it interleaves
 * extended-protocol messages of concurrent connections; so the owning process
 * uses one pooled connection, and other processes (the CLI) are rare visitors.
 */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const RUNTIME_FILE = 'embedded-postgres.json';

interface RuntimeInfo {
  pid: number;
  port: number;
}

export async function startEmbeddedPostgres(options: { dataDir?: string; port?: number; host?: string } = {}): Promise<EmbeddedPostgres> {
  const host = options.host ?? '127.0.0.1';
  let dbPath: string | undefined;
  if (options.dataDir) {
    const running = await findRunningEmbeddedPostgres(options.dataDir);
    if (running) throw new Error(`embedded Postgres for ${options.dataDir} is already served by process ${running.pid} at ${running.url}`);
    dbPath = join(options.dataDir, 'postgres');
    await mkdir(dbPath, { recursive: true });
  }
  const db = await PGlite.create(dbPath ? { dataDir: dbPath } : {});
  const server = new PGLiteSocketServer({ db, host, port: options.port ?? 0, maxConnections: 32 });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  if (options.dataDir) {
    const info: RuntimeInfo = { pid: process.pid, port };
    await writeFile(join(options.dataDir, RUNTIME_FILE), JSON.stringify(info));
  }
  let stopped = false;
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      await db.close();
      if (options.dataDir) await rm(join(options.dataDir, RUNTIME_FILE), { force: true });
    },
  };
}

/** The embedded server another process (e.g. `npm start`) is serving for this data dir, if any. */
export async function findRunningEmbeddedPostgres(dataDir: string): Promise<{ pid: number; url: string } | null> {
  let info: RuntimeInfo;
  try {
    info = JSON.parse(await readFile(join(dataDir, RUNTIME_FILE), 'utf8')) as RuntimeInfo;
  } catch (err) {
    // None running (no file), or a file cut short by a crash while it was written.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) return null;
    throw err;
  }
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    // A stale file from a process that died without cleaning up (ESRCH), its pid since
    // taken by another user's process (EPERM).
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return null;
    throw err;
  }
  return { pid: info.pid, url: `postgres://postgres@127.0.0.1:${info.port}/postgres` };
}

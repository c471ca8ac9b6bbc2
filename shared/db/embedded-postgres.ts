import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { servePglite } from './pglite-wire-server.ts';

/**
 * Embedded Postgres: PGlite served over the wire protocol (pglite-wire-server.ts), so
 * every component keeps speaking postgres.js exactly as against a real server.
 *
 * PGlite has no authentication (the startup message goes straight to it), so the server listens on a Unix socket in a directory only our user
 * may enter (0700), never on a TCP port: other local users cannot connect. Its
 * data files are made owner-only too (PGlite's initial files come out 0666).
 *
 * PGlite is a single session. The server multiplexes connections onto it, lending
 * it to one connection per request cycle or transaction (pglite-session-queue.ts). The owning process uses one pooled connection, and other
 * processes (the CLI) are rare visitors.
 */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const RUNTIME_FILE = 'embedded-postgres.json';

/** Longest Unix socket path the kernel takes (sun_path is 108 bytes with its NUL), with a margin. */
const MAX_SOCKET_PATH = 100;
const SOCKET_NAME = '.s.PGSQL.5432';

interface RuntimeInfo {
  pid: number;
  /** The directory of the server's Unix socket. */
  socketDir: string;
}

/** libpq's form for a Unix socket, read by connectPostgres (and psql). */
export function socketUrl(socketDir: string): string {
  return `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
}

export async function startEmbeddedPostgres(options: { dataDir?: string } = {}): Promise<EmbeddedPostgres> {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  let dbPath: string | undefined;
  if (dataDir) {
    const running = await findRunningEmbeddedPostgres(dataDir);
    if (running) throw new Error(`embedded Postgres for ${dataDir} is already served by process ${running.pid} at ${running.url}`);
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    dbPath = join(dataDir, 'postgres');
    await mkdir(dbPath, { recursive: true, mode: 0o700 });
  }
  const socketDir = await makeSocketDir(dataDir);
  const db = await PGlite.create(dbPath ? { dataDir: dbPath } : {});
  if (dbPath) await ownerOnly(dbPath);
  const server = await servePglite(db, { path: join(socketDir.path, SOCKET_NAME), maxConnections: 32 });
  if (dataDir) {
    const info: RuntimeInfo = { pid: process.pid, socketDir: socketDir.path };
    await writeFile(join(dataDir, RUNTIME_FILE), JSON.stringify(info), { mode: 0o600 });
  }
  let stopped = false;
  return {
    url: socketUrl(socketDir.path),
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      await db.close();
      if (dataDir) await rm(join(dataDir, RUNTIME_FILE), { force: true });
      await socketDir.remove();
    },
  };
}

/**
 * The socket's directory, mode 0700: `<dataDir>/run` when the socket path fits the
 * kernel's limit, else a fresh directory under the system's temporary directory
 * (as for a database without a data dir). A socket left by a crash is removed.
 */
async function makeSocketDir(dataDir: string | undefined): Promise<{ path: string; remove(): Promise<void> }> {
  const inDataDir = dataDir && join(dataDir, 'run');
  if (inDataDir && join(inDataDir, SOCKET_NAME).length <= MAX_SOCKET_PATH) {
    await mkdir(inDataDir, { recursive: true, mode: 0o700 });
    await chmod(inDataDir, 0o700);
    await rm(join(inDataDir, SOCKET_NAME), { force: true });
    return { path: inDataDir, remove: () => rm(join(inDataDir, SOCKET_NAME), { force: true }) };
  }
  const temporary = await mkdtemp(join(tmpdir(), 'linkroute-pg-')); // created 0700
  return { path: temporary, remove: () => rm(temporary, { recursive: true, force: true }) };
}

/** Takes group and other permissions off everything under `dir` (Postgres' own later files are 0600 already). */
async function ownerOnly(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    await chmod(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o700 : 0o600);
  }
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
  if (typeof info.socketDir !== 'string') {
    // An older linkroute, serving on a TCP port: stop and start it again with this version.
    throw new Error(`the embedded Postgres for ${dataDir} is served by process ${info.pid}, an older linkroute version; restart it`);
  }
  return { pid: info.pid, url: socketUrl(info.socketDir) };
}

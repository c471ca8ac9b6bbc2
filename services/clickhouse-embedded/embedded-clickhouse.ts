import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger, type Logger } from '../../shared/logger.ts';
import { ChdbThread } from './chdb-thread.ts';
import { ConnectionState } from './connection-state.ts';
import { EMBEDDED_USER } from './credentials.ts';
import { EngineQueue } from './engine-queue.ts';
import { createRequestHandler } from './http-handler.ts';
import { SettingsPolicy } from './request-settings.ts';

/**
 * Embedded ClickHouse: chDB (the ClickHouse engine as a library) served on
 * loopback over the subset of ClickHouse's HTTP interface that
 * @clickhouse/client uses, so linkroute talks to ClickHouse one way only,
 * whether to a real server or to this local stand-in.
 *
 * The engine runs in a worker thread (its calls block the thread they run on,
 * and this may share a process with the redirector); the HTTP server stays on
 * the calling thread and queues statements to it one at a time.
 *
 * chDB binds one data directory per process: do not start two of these with
 * different directories in the same process at the same time.
 */
export interface EmbeddedClickHouse {
  /** With the credentials in it (`http://default:<password>@host:port`), as @clickhouse/client takes them. */
  url: string;
  /** `url` without the credentials, for logs and health checks. */
  address: string;
  stop(): Promise<void>;
}

export interface EmbeddedClickHouseOptions {
  /** Persistent chDB path; omitted = a fresh temporary directory, removed on stop. */
  dataDir?: string;
  /** Default 127.0.0.1. chDB can read and write local files: keep it on loopback. */
  host?: string;
  /** The password of user `default`, required on every statement; omitted = a random one for this run. */
  password?: string;
  /** Default 0 = any free port. */
  port?: number;
  logger?: Logger;
  /** Largest accepted request body, decoded (default 512 MiB); bodies are held in memory whole. */
  maxBodyBytes?: number;
}

/**
 * Engine arguments: the session time zone is pinned to UTC so DateTime values
 * read and print as on a ClickHouse server in its usual container, whatever the
 * developer machine's zone.
 */
const CONNECTION_ARGS = ['--session_timezone=UTC'];

export async function startEmbeddedClickHouse(options: EmbeddedClickHouseOptions = {}): Promise<EmbeddedClickHouse> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? createLogger('clickhouse-embedded', 'warn');
  const password = options.password ?? randomBytes(24).toString('hex');
  const temporary = options.dataDir === undefined;
  const path = temporary ? await mkdtemp(join(tmpdir(), 'linkroute-chdb-')) : resolve(options.dataDir!);
  if (!temporary) {
    await mkdir(path, { recursive: true, mode: 0o700 });
    await chmod(path, 0o700); // what chDB writes is readable by our user alone
  }

  let thread: ChdbThread | undefined;
  let server: Server | undefined;
  try {
    // Insert data waits here while the engine reads it (insert-from-file.ts); a crash can leave one file behind.
    const spoolDir = join(path, 'insert-spool');
    await rm(spoolDir, { recursive: true, force: true });
    await mkdir(spoolDir);
    thread = await ChdbThread.start({ path, connectionArgs: CONNECTION_ARGS, spoolDir });
    const engine = await describeEngine(thread);
    const queue = new EngineQueue(thread, new ConnectionState(engine.baseline));
    const handler = createRequestHandler({
      queue,
      policy: new SettingsPolicy(engine.settingNames),
      timezone: engine.timezone,
      maxBodyBytes: options.maxBodyBytes ?? 512 * 1024 * 1024,
      logger,
      password,
    });
    const active = new ActiveRequests();
    server = createServer((req, res) => {
      active.track(res);
      handler(req, res);
    });
    // Longer than @clickhouse/client's idle socket TTL (2.5 s), so the client always drops a socket first.
    server.keepAliveTimeout = 10_000;
    const port = await listen(server, options.port ?? 0, host);
    const address = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const url = new URL(address);
    url.username = EMBEDDED_USER;
    url.password = password;

    const runningServer = server;
    let stopping: Promise<void> | undefined;
    return {
      url: url.toString().replace(/\/$/, ''),
      address,
      stop() {
        stopping ??= (async () => {
          const closed = new Promise<void>((done) => runningServer.close(() => done()));
          await queue.close();
          // Let the answers to the last requests (results, shutdown errors) go out, then drop idle keep-alive sockets.
          await active.drained(1000);
          runningServer.closeAllConnections();
          await closed;
          if (temporary) await rm(path, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (err) {
    server?.close();
    await thread?.close();
    if (temporary) await rm(path, { recursive: true, force: true });
    throw err;
  }
}

interface EngineDescription {
  settingNames: Set<string>;
  /** Settings whose value on a fresh connection is not the engine's built-in default. */
  baseline: Map<string, string>;
  timezone: string;
}

async function describeEngine(thread: ChdbThread): Promise<EngineDescription> {
  const settings = await thread.query('SELECT name, value, changed FROM system.settings', 'JSONCompactEachRow');
  const settingNames = new Set<string>();
  const baseline = new Map<string, string>();
  for (const line of Buffer.from(settings.bytes).toString('utf8').split('\n')) {
    if (!line) continue;
    const [name, value, changed] = JSON.parse(line) as [string, string, number | boolean];
    settingNames.add(name);
    if (changed) baseline.set(name, value);
  }
  const tz = await thread.query('SELECT timezone()', 'TabSeparated');
  return { settingNames, baseline, timezone: Buffer.from(tz.bytes).toString('utf8').trim() };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      done((server.address() as AddressInfo).port);
    });
  });
}

/** Responses not yet finished, so stop() can let them go out before closing sockets. */
class ActiveRequests {
  private count = 0;
  private waiters: Array<() => void> = [];

  track(res: ServerResponse): void {
    this.count++;
    res.once('close', () => {
      this.count--;
      if (this.count === 0) for (const w of this.waiters.splice(0)) w();
    });
  }

  drained(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((done) => {
      this.waiters.push(done);
      setTimeout(done, timeoutMs).unref();
    });
  }
}

import { join, resolve } from 'node:path';
import { ConfigError } from '../config/config-error.ts';
import { connectPostgres, type Sql } from './postgres.ts';
import { findRunningEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';
import { pathExists } from '../path-exists.ts';

export interface Database {
  sql: Sql;
  /** Set when this process serves the embedded database itself. */
  embedded: EmbeddedPostgres | null;
  description: string;
  close(): Promise<void>;
}

/**
 * DATABASE_URL set: that server. Unset: the embedded database under DATA_DIR,
 * attached through the socket of the process already serving it, or served by
 * this process when none is.
 *
 * `create: false` (the CLI's commands other than migrate and workspace create)
 * refuses to make a new embedded database: a DATA_DIR that points elsewhere than
 * the running instance's would otherwise get an empty one, quietly.
 *
 * `answerTimeoutMs`: connectPostgres's bound on a wait for Postgres's answer.
 */
export async function openDatabase(options: { databaseUrl?: string | undefined; dataDir: string; applicationName: string; create?: boolean; answerTimeoutMs?: number }): Promise<Database> {
  if (options.databaseUrl) {
    const sql = connectPostgres(options.databaseUrl, { applicationName: options.applicationName, answerTimeoutMs: options.answerTimeoutMs });
    return { sql, embedded: null, description: redact(options.databaseUrl), close: () => sql.end({ timeout: 5 }) };
  }
  const dbPath = join(resolve(options.dataDir), 'postgres');
  const running = await findRunningEmbeddedPostgres(options.dataDir);
  if (running) {
    const sql = connectPostgres(running.url, { max: 1, applicationName: options.applicationName, answerTimeoutMs: options.answerTimeoutMs });
    return { sql, embedded: null, description: `embedded Postgres in ${dbPath}, served by process ${running.pid}`, close: () => sql.end({ timeout: 5 }) };
  }
  if (options.create === false && !(await pathExists(join(dbPath, 'PG_VERSION')))) {
    throw new ConfigError(`no linkroute database in ${dbPath} (DATA_DIR=${options.dataDir}): set DATA_DIR to the one linkroute runs with, or DATABASE_URL; only migrate and workspace create make a new one`, [
      { path: 'DATA_DIR', message: `holds no database: ${dbPath}` },
    ]);
  }
  const embedded = await startEmbeddedPostgres({ dataDir: options.dataDir });
  const sql = connectPostgres(embedded.url, { max: 1, applicationName: options.applicationName, answerTimeoutMs: options.answerTimeoutMs });
  return {
    sql,
    embedded,
    description: `embedded Postgres (PGlite) in ${dbPath}`,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

function redact(url: string): string {
  const u = URL.parse(url);
  if (u === null) return 'DATABASE_URL';
  if (u.password) u.password = '***';
  return u.toString();
}

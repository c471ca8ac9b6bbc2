import { connectPostgres, type Sql } from './postgres.ts';
import { findRunningEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';

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
 */
export async function openDatabase(options: { databaseUrl?: string | undefined; dataDir: string; applicationName: string }): Promise<Database> {
  if (options.databaseUrl) {
    const sql = connectPostgres(options.databaseUrl, { applicationName: options.applicationName });
    return { sql, embedded: null, description: redact(options.databaseUrl), close: () => sql.end({ timeout: 5 }) };
  }
  const running = await findRunningEmbeddedPostgres(options.dataDir);
  if (running) {
    const sql = connectPostgres(running.url, { max: 1, applicationName: options.applicationName });
    return { sql, embedded: null, description: `embedded Postgres served by process ${running.pid}`, close: () => sql.end({ timeout: 5 }) };
  }
  const embedded = await startEmbeddedPostgres({ dataDir: options.dataDir });
  const sql = connectPostgres(embedded.url, { max: 1, applicationName: options.applicationName });
  return {
    sql,
    embedded,
    description: `embedded Postgres (PGlite) in ${options.dataDir}/postgres on ${embedded.url}`,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

function redact(url: string): string {
  if (!URL.canParse(url)) return 'DATABASE_URL';
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

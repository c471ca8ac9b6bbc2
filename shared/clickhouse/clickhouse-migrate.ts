import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../logger.ts';
import { connectClickHouse } from './clickhouse-client.ts';

const migrationsDir = fileURLToPath(new URL('../../clickhouse/', import.meta.url));

/**
 * Applies `clickhouse/NNNN_name.sql` in order, recording each in
 * schema_migrations. Statements are written IF NOT EXISTS, so two processes
 * migrating at once both succeed; the record only saves work on later starts.
 *
 * With `exclusive` (the caller holds the deployment's migration lease, so no other
 * process migrates this store meanwhile: migrate-exclusively.ts), a fill an earlier
 * attempt left unfinished is started again (discardUnfinishedFill); `confirm` throws
 * once the lease is lost, and is called before each migration and each such restart.
 * Without it, such a fill stays as it is: another process could be running it now.
 */
export async function migrateClickHouse(client: ClickHouseClient, options: { logger?: Logger; exclusive?: ExclusiveMigration } = {}): Promise<string[]> {
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations (version String, applied_at DateTime DEFAULT now())
            ENGINE = ReplacingMergeTree ORDER BY version`,
  });
  const done = new Set(
    (await (await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' })).json<{ version: string }>()).map((r) => r.version),
  );
  const files = await migrationFiles();
  const applied: string[] = [];
  for (const file of files) {
    const version = file.replace(/\.sql$/, '');
    if (done.has(version)) continue;
    const statements = splitStatements(await readFile(migrationsDir + file, 'utf8'));
    if (options.exclusive) {
      await options.exclusive.confirm();
      for (const fill of refilledTables(statements)) await discardUnfinishedFill(client, fill, options.exclusive, options.logger);
    }
    for (const statement of statements) {
      await client.command({ query: statement });
    }
    await client.insert({ table: 'schema_migrations', values: [{ version }], format: 'JSONEachRow' });
    applied.push(version);
  }
  return applied;
}

/**
 * A backfill (INSERT ... SELECT over every stored event, as 0004-0006 run once) takes
 * ~9 s per million events on the embedded engine, and ClickHouse sends nothing until
 * it is done. A client gives up on a request after its request timeout of silence (30 s
 * for connectClickHouse), which would fail the start of every upgraded ingester on a
 * store of a few million events. Hours, so that only a dead server stops a migration.
 */
export const MIGRATION_REQUEST_TIMEOUT_MS = 6 * 3_600_000;

/** Proof that the caller holds the migration lease: `confirm` renews it, and throws MigrationLeaseLostError once it is lost. */
export interface ExclusiveMigration {
  confirm(): Promise<void>;
}

/** The migration lease was taken by another process while this one migrated: it stops, as the other one may be migrating now. */
export class MigrationLeaseLostError extends Error {
  readonly code = 'MIGRATION_LEASE_LOST';
  constructor() {
    super('the ClickHouse migration lease was lost while migrating; stopping (another process may be migrating now)');
  }
}

/** migrateClickHouse through a client of its own whose requests may run for hours. */
export async function migrateClickHouseAt(url: string, options: { requestTimeoutMs?: number; logger?: Logger; exclusive?: ExclusiveMigration } = {}): Promise<string[]> {
  const client = connectClickHouse(url, { requestTimeoutMs: options.requestTimeoutMs ?? MIGRATION_REQUEST_TIMEOUT_MS });
  try {
    return await migrateClickHouse(client, { logger: options.logger, exclusive: options.exclusive });
  } finally {
    await client.close();
  }
}

export async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
}

/** A table a migration creates and fills from the stored events, and the views it then makes to feed it. */
export interface RefilledTable {
  table: string;
  views: string[];
}

/**
 * The tables a migration's statements create, fill (INSERT INTO) and then feed by
 * materialized views (TO the table). Invariant of every such migration, checked by
 * clickhouse-migrate.test.ts: its fills come before its views.
 */
export function refilledTables(statements: string[]): RefilledTable[] {
  const created = new Set(statements.flatMap((s) => /^CREATE TABLE IF NOT EXISTS (\w+)/i.exec(s)?.[1] ?? []));
  const filled = new Set(statements.flatMap((s) => /^INSERT INTO (\w+)/i.exec(s)?.[1] ?? []));
  const views = new Map<string, string[]>();
  for (const statement of statements) {
    const [, view, table] = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+)/i.exec(statement) ?? [];
    if (view && table) views.set(table, [...(views.get(table) ?? []), view]);
  }
  return [...created].filter((table) => filled.has(table) && views.has(table)).map((table) => ({ table, views: views.get(table)! }));
}

/**
 * ClickHouse writes an INSERT ... SELECT in blocks of about a million rows, each kept as
 * it is written, and a fill runs only into an empty table (so that processes migrating
 * at once do not fill twice). A fill cut short (SIGKILL, out of memory, a restart) used
 * to leave part of the history there for good (checked: a 20M-row fill killed after 2 s
 * kept 3,145,728 rows, and a second run added none).
 *
 * Called only by the holder of the migration lease, for a migration not recorded: no
 * other process is migrating. A table this migration creates, while none of the views it
 * makes to feed it exists, then holds only what an earlier attempt's fills wrote (its
 * views come after its fills: clickhouse-migrate.test.ts), complete or not: emptied, so
 * the fill runs again, whole. TRUNCATE also forgets the inserts' deduplication tokens,
 * which would otherwise drop the refill's blocks as repeats of the first attempt's.
 */
async function discardUnfinishedFill(client: ClickHouseClient, { table, views }: RefilledTable, exclusive: ExclusiveMigration, logger?: Logger): Promise<void> {
  const count = async (query: string, params: Record<string, unknown>) =>
    Number((await (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n);
  const exists = (names: string[]) => count('SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name IN {names:Array(String)}', { names });
  if ((await exists([table])) === 0 || (await exists(views)) > 0 || (await count(`SELECT count() AS n FROM ${table}`, {})) === 0) return;
  // A ClickHouse server runs an INSERT ... SELECT on after its client is gone: the fill of
  // a process that died may still be writing. Emptied under it, the table would end up
  // holding its later blocks beside the refill's. (The embedded endpoint runs statements
  // one at a time, so there this look comes after any such fill anyway.)
  const inserting = () => count('SELECT count() AS n FROM system.processes WHERE query_kind = {kind:String} AND positionCaseInsensitive(query, {insert:String}) = 1', { kind: 'Insert', insert: `INSERT INTO ${table} ` });
  for (let said = false; (await inserting()) > 0; said = true) {
    if (!said) logger?.warn('a fill of an earlier migration attempt is still running on the server; waiting for it before filling again', { table });
    await new Promise((r) => setTimeout(r, 1_000));
    await exclusive.confirm();
  }
  await exclusive.confirm();
  logger?.warn('an earlier migration attempt left a fill unfinished: emptying the table to fill it again', { table });
  await client.command({ query: `TRUNCATE TABLE ${table}` });
}

/** Our migration files put one statement per `;`-terminated block and no `;` inside strings. */
export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from '@clickhouse/client';
import { connectClickHouse } from './clickhouse-client.ts';

const migrationsDir = fileURLToPath(new URL('../../clickhouse/', import.meta.url));

/**
 * Applies `clickhouse/NNNN_name.sql` in order, recording each in
 * schema_migrations. Statements are written IF NOT EXISTS, so two processes
 * migrating at once both succeed; the record only saves work on later starts.
 */
export async function migrateClickHouse(client: ClickHouseClient): Promise<string[]> {
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations (version String, applied_at DateTime DEFAULT now())
            ENGINE = ReplacingMergeTree ORDER BY version`,
  });
  const done = new Set(
    (await (await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' })).json<{ version: string }>()).map((r) => r.version),
  );
  const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  for (const file of files) {
    const version = file.replace(/\.sql$/, '');
    if (done.has(version)) continue;
    for (const statement of splitStatements(await readFile(migrationsDir + file, 'utf8'))) {
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

/** migrateClickHouse through a client of its own whose requests may run for hours. */
export async function migrateClickHouseAt(url: string, requestTimeoutMs = MIGRATION_REQUEST_TIMEOUT_MS): Promise<string[]> {
  const client = connectClickHouse(url, { requestTimeoutMs });
  try {
    return await migrateClickHouse(client);
  } finally {
    await client.close();
  }
}

/** Our migration files put one statement per `;`-terminated block and no `;` inside strings. */
function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Sql } from './postgres.ts';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies `migrations/NNNN_name.sql` in order, each recorded in schema_migrations.
 * Idempotent, and safe when several processes start at once: everything runs in
 * one transaction behind a transaction-scoped advisory lock, so a second migrator
 * waits and then finds nothing left to do.
 */
export async function migrate(sql: Sql): Promise<MigrationResult> {
  const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(727001)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    const done = new Set((await tx<{ version: string }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      await tx.unsafe(await readFile(migrationsDir + file, 'utf8'));
      await tx`INSERT INTO schema_migrations (version) VALUES (${version})`;
      applied.push(version);
    }
    return { applied, alreadyApplied: done.size };
  }) as Promise<MigrationResult>;
}

import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import { withoutAnswerTimeout, type Sql } from './postgres.ts';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
  /** Applied versions this code has no file for: a newer linkroute migrated the database. */
  unknown: string[];
}

/**
 * Applies `migrations/NNNN_name.sql` in order, each recorded in schema_migrations.
 * Idempotent, and safe when several processes start at once: everything runs in
 * one transaction behind a transaction-scoped advisory lock, so a second migrator
 * waits and then finds nothing left to do.
 *
 * A database a newer version migrated is used as it is (in a rolling upgrade, older
 * instances run beside newer ones, and migrations only add), with a warning naming the
 * versions this one does not know: running an older version on it for good is a
 * downgrade, which is not supported.
 */
export async function migrate(sql: Sql, logger?: Logger): Promise<MigrationResult> {
  const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  // Not bounded by the pool's answer timeout: the lock waits for another migrator, and a
  // migration may build an index on a large table.
  return withoutAnswerTimeout(sql, () => sql.begin(async (tx) => {
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
    const known = new Set(files.map((f) => f.replace(/\.sql$/, '')));
    return { applied, alreadyApplied: done.size, unknown: [...done].filter((v) => !known.has(v)).sort() };
  })).then((result) => {
    if (result.unknown.length > 0) {
      logger?.warn('the database was migrated by a newer linkroute: fine while a rolling upgrade is under way; running this version on it for good is an unsupported downgrade', {
        unknownMigrations: result.unknown,
      });
    }
    return result;
  }) as Promise<MigrationResult>;
}

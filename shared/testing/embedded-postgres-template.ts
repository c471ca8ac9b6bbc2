import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../db/embedded-postgres.ts';
import { connectPostgres } from '../db/postgres.ts';
import { migrate } from '../db/migrate.ts';

/**
 * One migrated embedded Postgres (PGlite) data directory for a whole test run, made by
 * tests/global-setup.ts and copied into each new DATA_DIR a test starts linkroute on.
 *
 * Why: a new PGlite database runs initdb, 3-6 s of CPU on the 2-core CI machine (a
 * copy of a migrated one opens in ~0.5 s), and the run starts dozens of them. The
 * template is made by the same code a first start runs (startEmbeddedPostgres, then
 * migrate), from this checkout's migrations, and closed cleanly before it is copied; the
 * tests of a first start on an empty DATA_DIR (services/all-in-one/start.int,
 * shared/db/embedded-postgres.int) do not seed theirs. Not vitest's: global setup imports it.
 */
export async function buildEmbeddedPostgresTemplate(): Promise<{ dataDir: string; remove(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'linkroute-pglite-template-'));
  const embedded = await startEmbeddedPostgres({ dataDir });
  const sql = connectPostgres(embedded.url, { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await embedded.stop();
  }
  return { dataDir, remove: () => rm(dataDir, { recursive: true, force: true }) };
}

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPostgres, type Sql } from '../db/postgres.ts';
import { startEmbeddedPostgres } from '../db/embedded-postgres.ts';
import { migrate } from '../db/migrate.ts';

/**
 * Test databases on both backends we support: the machine's real Postgres
 * (a fresh database per call, dropped on close) and embedded PGlite (in a data
 * directory of its own, seeded from the run's migrated template, served on a Unix
 * socket exactly as `npm start` serves it; removed on close).
 */
export type Backend = 'postgres' | 'pglite';
export const backends: readonly Backend[] = ['postgres', 'pglite'];

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  backend: Backend;
  url: string;
  sql: Sql;
  close(): Promise<void>;
}

/** Postgres databases created and not yet dropped, by name, each with its close(). */
const open = new Map<string, () => Promise<void>>();

/**
 * Drops every database this process created and has not dropped yet: what an
 * interrupted benchmark (bench/cleanup.ts) runs before it exits.
 */
export async function dropOpenTestDatabases(): Promise<void> {
  await Promise.all([...open.values()].map((close) => close()));
}

export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    // Imported here: it is vitest's (the template is the run's), and benchmarks use Postgres.
    const { seedEmbeddedPostgres } = await import('./seed-embedded-postgres.ts');
    const dataDir = await mkdtemp(join(tmpdir(), 'lr-test-pglite-'));
    await seedEmbeddedPostgres(dataDir);
    const embedded = await startEmbeddedPostgres({ dataDir });
    const sql = connectPostgres(embedded.url, { max: 1 });
    await migrate(sql);
    return {
      backend,
      url: embedded.url,
      sql,
      async close() {
        await sql.end({ timeout: 5 });
        await embedded.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const name = `lr_test_${randomBytes(6).toString('hex')}`;
  const admin = connectPostgres(ADMIN_URL, { max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = ADMIN_URL.replace(/\/postgres$/, `/${name}`);
  const sql = connectPostgres(url, { max: 5 });
  // Once only: an interrupted benchmark's cleanup may call it while the test's own teardown does.
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
      open.delete(name);
    })());
  open.set(name, close);
  try {
    await migrate(sql);
  } catch (err) {
    // A failed migration would otherwise leave the database behind: nobody gets its close().
    await close();
    throw err;
  }
  return { backend, url, sql, close };
}

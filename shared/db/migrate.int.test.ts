import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { connectPostgres } from './postgres.ts';
import { migrate } from './migrate.ts';

describe.each(backends)('migrations on %s', (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(backend); // already migrated once
  });
  afterAll(() => db?.close());

  it('are idempotent: a second run applies nothing and keeps data', async () => {
    await db.sql`INSERT INTO workspaces (id, name, plan) VALUES ('ws_keep', 'keep', 'pro')`;
    const again = await migrate(db.sql);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toBeGreaterThanOrEqual(1);
    expect((await db.sql`SELECT name FROM workspaces WHERE id = 'ws_keep'`)[0]!.name).toBe('keep');
    expect(again.unknown).toEqual([]);
  });

  it('uses a database a newer version migrated as it is, and says so', async () => {
    await db.sql`INSERT INTO schema_migrations (version) VALUES ('9999_from_a_newer_linkroute')`;
    const warnings: Array<[string, Record<string, unknown> | undefined]> = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (message: string, fields?: Record<string, unknown>) => warnings.push([message, fields]) };
    const result = await migrate(db.sql, logger);
    expect(result).toMatchObject({ applied: [], unknown: ['9999_from_a_newer_linkroute'] });
    expect(warnings).toEqual([[expect.stringContaining('newer linkroute'), { unknownMigrations: ['9999_from_a_newer_linkroute'] }]]);
    await db.sql`DELETE FROM schema_migrations WHERE version = '9999_from_a_newer_linkroute'`;
  });
});

describe('migrations on postgres, concurrently', () => {
  it('are safe when several processes migrate at once', async () => {
    const fresh = await createTestDatabase('postgres');
    try {
      const expected = (await fresh.sql<{ version: string }[]>`SELECT version FROM schema_migrations ORDER BY version`).map((r) => r.version);
      await fresh.sql`DROP SCHEMA public CASCADE`;
      await fresh.sql`CREATE SCHEMA public`;
      const clients = Array.from({ length: 4 }, () => connectPostgres(fresh.url, { max: 1 }));
      const results = await Promise.all(clients.map((sql) => migrate(sql)));
      await Promise.all(clients.map((sql) => sql.end()));
      // Exactly one migrator applied each migration; the others waited and found nothing to do.
      expect(results.flatMap((r) => r.applied)).toEqual(expected);
      expect(expected.length).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  });
});

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { migrationFiles, refilledTables, splitStatements } from './clickhouse-migrate.ts';

const statementsOf = async (file: string) => splitStatements(await readFile(new URL(`../../clickhouse/${file}`, import.meta.url), 'utf8'));

describe('ClickHouse migration files', () => {
  it("fill the tables they create before making the views that feed them (what restarting an unfinished fill relies on)", async () => {
    const refilled: string[] = [];
    for (const file of await migrationFiles()) {
      const statements = await statementsOf(file);
      for (const { table, views } of refilledTables(statements)) {
        refilled.push(table);
        const lastFill = statements.findLastIndex((s) => new RegExp(`^INSERT INTO ${table}\\b`, 'i').test(s));
        const firstView = statements.findIndex((s) => views.some((v) => new RegExp(`^CREATE MATERIALIZED VIEW IF NOT EXISTS ${v} TO ${table}\\b`, 'i').test(s)));
        expect(lastFill, `${file}: ${table}`).toBeLessThan(firstView);
      }
      // A fill into a table the migration creates without a view to feed it would never be started again.
      const created = statements.flatMap((s) => /^CREATE TABLE IF NOT EXISTS (\w+)/i.exec(s)?.[1] ?? []);
      for (const table of created) {
        const filled = statements.some((s) => new RegExp(`^INSERT INTO ${table}\\b`, 'i').test(s));
        if (filled) expect(refilled, `${file}: ${table} is filled with no view`).toContain(table);
      }
    }
    // An unrecorded migration empties a refilled table it finds without its views: one an
    // earlier file made (a rollup in use) must never be refilled by a later file.
    const createdBefore = new Map<string, string>();
    for (const file of await migrationFiles()) {
      const statements = await statementsOf(file);
      for (const { table } of refilledTables(statements)) expect(createdBefore.get(table), `${file} refills ${table}, made by an earlier file`).toBeUndefined();
      for (const s of statements) {
        const table = /^CREATE TABLE IF NOT EXISTS (\w+)/i.exec(s)?.[1];
        if (table && !createdBefore.has(table)) createdBefore.set(table, file);
      }
    }
    expect(refilled).toEqual([
      'workspace_clicks', 'link_clicks', 'overview_clicks', 'overview_link_clicks', 'click_log', 'click_facts', 'dimension_daily', 'converted_clicks', 'clicks_by_time',
    ]);
  });
});

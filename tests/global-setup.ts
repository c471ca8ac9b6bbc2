import type { TestProject } from 'vitest/node';
import { startEmbeddedClickHouse } from '../services/clickhouse-embedded/embedded-clickhouse.ts';
import { createLogger } from '../shared/logger.ts';
import { startSideBySide } from '../shared/start-side-by-side.ts';
import { buildEmbeddedPostgresTemplate } from '../shared/testing/embedded-postgres-template.ts';
import type {} from '../shared/testing/test-clickhouse.ts'; // declares what is provided
import type {} from '../shared/testing/seed-embedded-postgres.ts';

/**
 * One embedded ClickHouse for the whole test run, as the machine's Postgres is one
 * server for every test file: each file gets its own database on it
 * (shared/testing/test-clickhouse.ts). Started here, the composition root of the
 * tests, so no service's tests import another service to get a ClickHouse. And one
 * migrated embedded Postgres that new DATA_DIRs are seeded from (seed-embedded-postgres.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  /** Both at the end of the run, and whichever started when the other failed to. */
  const stop = async ([clickhouse, template]: [{ stop(): Promise<void> }?, { remove(): Promise<void> }?]) => {
    await clickhouse?.stop();
    await template?.remove();
  };
  const started = await startSideBySide([startEmbeddedClickHouse({ logger: createLogger('test-clickhouse', 'warn') }), buildEmbeddedPostgresTemplate()], stop);
  const [clickhouse, template] = started;
  project.provide('clickhouseUrl', clickhouse.url);
  project.provide('embeddedPostgresTemplate', template.dataDir);
  return () => stop(started);
}

import type { TestProject } from 'vitest/node';
import { startEmbeddedClickHouse } from '../services/clickhouse-embedded/embedded-clickhouse.ts';
import { createLogger } from '../shared/logger.ts';
import type {} from '../shared/testing/test-clickhouse.ts'; // declares what is provided

/**
 * One embedded ClickHouse for the whole test run, as the machine's Postgres is one
 * server for every test file: each file gets its own database on it
 * (shared/testing/test-clickhouse.ts). Started here, the composition root of the
 * tests, so no service's tests import another service to get a ClickHouse.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const clickhouse = await startEmbeddedClickHouse({ logger: createLogger('test-clickhouse', 'warn') });
  project.provide('clickhouseUrl', clickhouse.url);
  return () => clickhouse.stop();
}

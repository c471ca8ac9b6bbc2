import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connectClickHouse } from '../clickhouse/clickhouse-client.ts';

/**
 * A fresh, empty ClickHouse database for one test file on the run's embedded
 * ClickHouse (tests/global-setup.ts), dropped on close. `url` names the database
 * in its path, so every client made from it (connectClickHouse,
 * migrateClickHouseAt) works in that database.
 */
export interface TestClickHouse {
  url: string;
  database: string;
  close(): Promise<void>;
}

export async function createTestClickHouse(): Promise<TestClickHouse> {
  const server = inject('clickhouseUrl');
  const database = `lr_test_${randomBytes(6).toString('hex')}`;
  const admin = connectClickHouse(server);
  await admin.command({ query: `CREATE DATABASE ${database}` });
  return {
    url: `${server}/${database}`,
    database,
    async close() {
      try {
        await admin.command({ query: `DROP DATABASE IF EXISTS ${database} SYNC` });
      } finally {
        await admin.close();
      }
    },
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test run's embedded ClickHouse endpoint, without a database (tests/global-setup.ts). */
    clickhouseUrl: string;
  }
}

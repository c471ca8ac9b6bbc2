import { createTestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import { startTestApi, type TestApi } from './api-harness.ts';

/** The API over Postgres and a fresh, migrated ClickHouse database of its own, for analytics tests. */
export interface AnalyticsTestApi {
  api: TestApi;
  /** A client of that ClickHouse database, to insert events and conversions. */
  clickhouse: ClickHouseClient;
  close(): Promise<void>;
}

export async function startAnalyticsTestApi(): Promise<AnalyticsTestApi> {
  const ch = await createTestClickHouse();
  const clickhouse = connectClickHouse(ch.url);
  await migrateClickHouse(clickhouse);
  const api = await startTestApi('postgres', { analytics: clickhouse });
  return {
    api,
    clickhouse,
    async close() {
      await api.close();
      await clickhouse.close();
      await ch.close();
    },
  };
}

import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import { checkBus, checkClickHouse, checkQuery, type CheckResult } from '../../shared/health/dependency-checks.ts';
import { startHealthServer, type HealthServer } from '../../shared/health/health-server.ts';
import type { Logger } from '../../shared/logger.ts';
import type { ApiConfig } from './config.ts';

/**
 * The API's admin port (ADMIN_HOST:ADMIN_PORT, loopback by default): /metrics, which
 * counts every workspace's requests and no API key may read, with /health and /ready
 * for the same monitoring. /ready decides as the public one does (routes/health.ts):
 * Postgres only; NATS and ClickHouse are reported.
 */
export function startApiAdminServer(deps: {
  config: Pick<ApiConfig, 'ADMIN_PORT' | 'ADMIN_HOST'>;
  registry: Registry;
  sql: Sql;
  bus?: Bus | null | undefined;
  clickhouse?: ClickHouseClient | null | undefined;
  logger: Logger;
}): Promise<HealthServer> {
  const { sql, bus, clickhouse } = deps;
  return startHealthServer({
    port: deps.config.ADMIN_PORT,
    host: deps.config.ADMIN_HOST,
    registry: deps.registry,
    checks: async () => {
      const checks: Record<string, CheckResult> = { postgres: await checkQuery(sql`SELECT 1`) };
      if (bus) checks.nats = checkBus(bus);
      if (clickhouse) checks.clickhouse = await checkClickHouse(clickhouse);
      return checks;
    },
    optional: ['nats', 'clickhouse'],
    logger: deps.logger,
  });
}

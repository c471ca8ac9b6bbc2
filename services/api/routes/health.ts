import type Router from '@koa/router';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../../../shared/errors.ts';
import type { Bus } from '../../../shared/bus/bus.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { checkBus, checkClickHouse, checkQuery, type CheckResult } from '../../../shared/health/dependency-checks.ts';
import { ok } from '../respond.ts';

/**
 * `/health`: the process is alive. `/ready`: it can serve. Neither needs a key.
 *
 * Only Postgres decides readiness: every management request needs it. NATS and
 * ClickHouse, when configured, are reported in `checks` but do not fail the probe,
 * because the API keeps working without them (changes wait in the outbox, counters
 * read as unavailable, analytics answer 503): taking every instance out of rotation
 * over a ClickHouse outage would turn degraded analytics into a full outage.
 */
export function healthRoutes(router: Router, deps: { sql: Sql; bus?: Bus | undefined; clickhouse?: ClickHouseClient | undefined }): void {
  router.get('/health', (ctx) => ok(ctx, { status: 'ok' }));
  router.get('/ready', async (ctx) => {
    const [postgres, clickhouse] = await Promise.all([
      checkQuery(deps.sql`SELECT 1`),
      deps.clickhouse ? checkClickHouse(deps.clickhouse) : undefined,
    ]);
    const checks: Record<string, CheckResult> = { postgres };
    if (deps.bus) checks.nats = checkBus(deps.bus);
    if (clickhouse) checks.clickhouse = clickhouse;
    if (postgres !== 'ok') {
      throw new AppError('SERVICE_UNAVAILABLE', 'Postgres is not reachable', Object.entries(checks).map(([path, state]) => ({ path, message: state })));
    }
    ok(ctx, { status: 'ready', checks });
  });
}

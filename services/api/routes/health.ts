import type Router from '@koa/router';
import { AppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { ok } from '../respond.ts';

/** `/health`: the process is alive. `/ready`: its dependencies answer. Neither needs a key. */
export function healthRoutes(router: Router, deps: { sql: Sql }): void {
  router.get('/health', (ctx) => ok(ctx, { status: 'ok' }));
  router.get('/ready', async (ctx) => {
    try {
      await deps.sql`SELECT 1`;
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'Postgres is not reachable');
    }
    ok(ctx, { status: 'ready', checks: { postgres: 'ok' } });
  });
}

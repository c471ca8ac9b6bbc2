import type Router from '@koa/router';
import { AppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { describeKey } from '../../../shared/db/workspaces.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { ok } from '../respond.ts';

/** `GET /me`: any valid key may ask who it is; no scope needed. */
export function meRoutes(router: Router, deps: { sql: Sql; requireScope: RequireScope }): void {
  router.get('/me', deps.requireScope(null), async (ctx) => {
    const identity = await describeKey(deps.sql, principalOf(ctx).keyId);
    // Revoked between authentication and this read: the key is no longer valid.
    if (!identity) throw new AppError('UNAUTHORIZED', 'Invalid or revoked API key');
    ok(ctx, identity);
  });
}

import type Router from '@koa/router';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { analyticsLinkQuerySchema, analyticsQuerySchema, clickLogQuerySchema, conversionReportQuerySchema } from '../../../shared/schemas/analytics.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { analyticsOverview } from '../analytics/overview-query.ts';
import { clickLog } from '../analytics/click-log-query.ts';
import { conversionReport } from '../analytics/conversion-report-query.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { ok, okList } from '../respond.ts';
import type { LinkStore } from '../stores/link-store.ts';

export interface AnalyticsRouteDeps {
  sql: Sql;
  links: LinkStore;
  requireScope: RequireScope;
  /** Absent when no ClickHouse is configured: analytics then answer 503 rather than a misleading zero. */
  analytics?: ClickHouseClient | undefined;
}

export function analyticsRoutes(router: Router, deps: AnalyticsRouteDeps): void {
  const { sql, links, requireScope } = deps;

  function store(): ClickHouseClient {
    if (!deps.analytics) throw new AppError('SERVICE_UNAVAILABLE', 'Analytics are not available: no analytics store is configured');
    return deps.analytics;
  }

  router.get('/analytics', requireScope('analytics:read'), async (ctx) => {
    const query = parseInput(analyticsQuerySchema, ctx.query, 'query');
    ok(ctx, await analyticsOverview(store(), sql, { ...query, workspaceId: principalOf(ctx).workspaceId }));
  });

  router.get('/analytics/conversions', requireScope('analytics:read'), async (ctx) => {
    const query = parseInput(conversionReportQuerySchema, ctx.query, 'query');
    const { report, total } = await conversionReport(store(), { ...query, workspaceId: principalOf(ctx).workspaceId });
    ctx.body = { success: true, data: report, pagination: pagination(query.page, query.limit, total) };
  });

  // Registered before /analytics/:linkId so "clicks" is never read as a link id.
  router.get('/analytics/clicks', requireScope('analytics:read'), async (ctx) => {
    const query = parseInput(clickLogQuerySchema, ctx.query, 'query');
    const { items, total } = await clickLog(store(), principalOf(ctx).workspaceId, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.get('/analytics/:linkId', requireScope('analytics:read'), async (ctx) => {
    const query = parseInput(analyticsLinkQuerySchema, ctx.query, 'query');
    const workspaceId = principalOf(ctx).workspaceId;
    const linkId = ctx.params.linkId!;
    // Another workspace's link reads as absent, like GET /links/{id}; so does a deleted one.
    const link = hasPrefix(linkId, 'link') ? await links.byId(workspaceId, linkId) : undefined;
    if (!link || link.deletedAt) throw new AppError('NOT_FOUND', 'Link not found');
    ok(ctx, await analyticsOverview(store(), sql, { ...query, linkId, workspaceId }));
  });
}

import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import {
  analyticsLinkQuerySchema,
  analyticsQuerySchema,
  breakdownQuerySchema,
  clickLogEntrySchema,
  clickLogQuerySchema,
  conversionRecordSchema,
  conversionReportQuerySchema,
  experimentQuerySchema,
  realtimeQuerySchema,
} from '../../../shared/schemas/analytics.ts';
import { dimensionFiltersOf, dimensionNames, type Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { analyticsOverview } from '../analytics/overview-query.ts';
import { clickLog, clickLogCsv } from '../analytics/click-log-query.ts';
import { conversionReport, conversionsCsv } from '../analytics/conversion-report-query.ts';
import { breakdown, breakdownExport } from '../analytics/breakdown-query.ts';
import { realtime } from '../analytics/realtime-query.ts';
import { experimentReport } from '../analytics/experiment-query.ts';
import type { ClickScope } from '../analytics/click-filter.ts';
import { LinkValueStore } from '../analytics/link-values.ts';
import { LinkValuePeriods } from '../analytics/link-value-periods.ts';
import type { Logger } from '../../../shared/logger.ts';
import { csvStream, sendCsv, toCsv, wantsCsv } from '../analytics/csv.ts';
import { ruleIdsInClicks } from '../analytics/rule-ids-in-clicks.ts';
import { endWhenClientCloses, requestSignal } from '../analytics/request-signal.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { ok, okList } from '../respond.ts';
import type { LinkStore } from '../stores/link-store.ts';

export interface AnalyticsRouteDeps {
  sql: Sql;
  links: LinkStore;
  requireScope: RequireScope;
  /** Absent when no ClickHouse is configured: analytics then answer 503 rather than a misleading zero. */
  analytics?: ClickHouseClient | undefined;
  logger: Logger;
}

interface ScopeQuery {
  campaignId?: string | undefined;
  linkId?: string | undefined;
  includeBots: boolean;
  [dimension: string]: unknown;
}

/** The CSV columns of a breakdown: the fields its rows carry. */
const breakdownColumns = (dimension: Dimension) => [
  'value',
  'label',
  ...(dimension === 'link' ? ['shortCode', 'domain', 'deleted'] : dimension === 'rule' ? ['name', 'type'] : []),
  'clicks',
  'uniqueClicks',
  'conversions',
  'revenue',
  'conversionRate',
];

/**
 * A CSV export holds every row (or value) of the range unless `limit` or `page` asks for
 * a page, which is then the CSV alone, as in JSON: cut at a default page, an export
 * would pass for the whole.
 */
const pageAsked = (ctx: Context) => ctx.query.limit !== undefined || ctx.query.page !== undefined;

export function analyticsRoutes(router: Router, deps: AnalyticsRouteDeps): void {
  const { sql, links, requireScope } = deps;

  function store(): ClickHouseClient {
    if (!deps.analytics) throw new AppError('SERVICE_UNAVAILABLE', 'Analytics are not available: no analytics store is configured');
    return deps.analytics;
  }

  let linkValueStore: LinkValueStore | undefined;
  /** Tags and the like, copied into ClickHouse as queries need them (one store per API instance). */
  const linkValues = () => (linkValueStore ??= new LinkValueStore(store(), sql));
  let periods: LinkValuePeriods | undefined;
  /** A tag breakdown's cached periods, filled in the background (one per API instance). */
  const linkValuePeriods = () => (periods ??= new LinkValuePeriods(store(), deps.logger));
  /**
   * On every analytics route, after the scope check: each ClickHouse statement of the
   * request takes its signal (requestSignal), so a client that gives up (a dashboard
   * times out a load and retries, a tab closes) cancels the statements under way and
   * starts no more; the request then ends quietly, answered to no one.
   */
  const whileClientConnected = endWhenClientCloses(deps.logger);

  /**
   * The clicks a request is about. Another workspace's link, campaign or rule, as a
   * scope (linkId, campaignId) or a filter value (link, campaign, rule), answers 404
   * as it does everywhere else; a deleted link's history stays readable, and so does
   * a deleted rule's: rules are deleted for good, so a rule id that names no rule is
   * one of the workspace's deleted rules when its clicks carry it, else 404 too
   * (rule-ids-in-clicks.ts). The
   * linkId scope also takes a live link's short code on the default domain, as the
   * paths /links/{id} and /analytics/{linkId} do.
   */
  async function scopeOf(ctx: Context, q: ScopeQuery, extra: Dimension[] = []): Promise<ClickScope> {
    const workspaceId = principalOf(ctx).workspaceId;
    const filters = dimensionFiltersOf(q);
    const linkId = q.linkId === undefined || hasPrefix(q.linkId, 'link') ? q.linkId : await idOfShortCode(workspaceId, q.linkId);
    const linkIds = [...new Set([...(linkId !== undefined ? [linkId] : []), ...(filters.link ?? []).filter((v): v is string => v !== null)])];
    const campaignIds = [...new Set([...(q.campaignId !== undefined ? [q.campaignId] : []), ...(filters.campaign ?? []).filter((v): v is string => v !== null)])];
    if (linkIds.length > 0) {
      const found = new Set((await sql<{ id: string }[]>`SELECT id FROM links WHERE workspace_id = ${workspaceId} AND id IN ${sql(linkIds)}`).map((r) => r.id));
      const missing = linkIds.find((id) => !found.has(id));
      if (missing !== undefined) throw new AppError('NOT_FOUND', `Link not found: ${missing}`);
    }
    if (campaignIds.length > 0) {
      const found = new Set((await sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${workspaceId} AND id IN ${sql(campaignIds)}`).map((r) => r.id));
      const missing = campaignIds.find((id) => !found.has(id));
      if (missing !== undefined) throw new AppError('NOT_FOUND', `Campaign not found: ${missing}`);
    }
    const ruleIds = [...new Set((filters.rule ?? []).filter((v): v is string => v !== null && v !== 'default'))];
    if (ruleIds.length > 0) {
      // Another workspace's rule and an id that exists nowhere must answer alike (message,
      // and a 503 while ClickHouse is away): both are asked of this workspace's clicks,
      // and the first missing id in the request's order is named.
      const rows = await sql<{ id: string; workspaceId: string }[]>`SELECT id, workspace_id FROM rules WHERE id IN ${sql(ruleIds)}`;
      const own = new Set(rows.filter((r) => r.workspaceId === workspaceId).map((r) => r.id));
      const others = ruleIds.filter((id) => !own.has(id));
      const foreign = new Set(rows.filter((r) => r.workspaceId !== workspaceId).map((r) => r.id));
      const deleted = others.length > 0 ? await ruleIdsInClicks(store(), workspaceId, others, q.includeBots, requestSignal(ctx)) : new Set<string>();
      const missing = others.find((id) => foreign.has(id) || !deleted.has(id));
      if (missing !== undefined) throw new AppError('NOT_FOUND', `Rule not found: ${missing}`);
    }
    const wanted = [...dimensionNames.filter((d) => filters[d] !== undefined), ...extra];
    return {
      workspaceId,
      campaignId: q.campaignId,
      linkId,
      includeBots: q.includeBots,
      filters,
      linkValues: await linkValues().snapshots(workspaceId, wanted, requestSignal(ctx)),
    };
  }

  async function idOfShortCode(workspaceId: string, code: string): Promise<string> {
    const id = (await links.idsByShortCode(workspaceId, [code])).get(code);
    if (id === undefined) throw new AppError('NOT_FOUND', `Link not found: ${code}`);
    return id;
  }

  /**
   * The id of a link of the caller's workspace whose report the path asks for, or 404.
   * By id a deleted link is found too: its clicks are history, readable here as they
   * are through the linkId and link filters (an analyst follows a retired link from
   * its row in a report). A short code names a live link only, as PATCH /links/{id}
   * takes it: a code names one link at a time, and a deleted link's never comes back.
   */
  async function reportedLink(ctx: Context): Promise<string> {
    const idOrCode = ctx.params.linkId!;
    const workspaceId = principalOf(ctx).workspaceId;
    const link = hasPrefix(idOrCode, 'link') ? await links.byId(workspaceId, idOrCode) : await links.byShortCode(workspaceId, idOrCode);
    if (!link) throw new AppError('NOT_FOUND', 'Link not found');
    return link.id;
  }

  router.get('/analytics', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(analyticsQuerySchema, ctx.query, 'query');
    const scope = await scopeOf(ctx, query);
    ok(ctx, await analyticsOverview(store(), sql, { ...query, ...scope }, requestSignal(ctx)));
  });

  router.get('/analytics/breakdown', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(breakdownQuerySchema, ctx.query, 'query');
    const dimension = query.dimension as Dimension;
    const scope = await scopeOf(ctx, query, [dimension]);
    const f = { ...query, ...scope, dimension };
    if (wantsCsv(ctx, query.format)) {
      const name = `breakdown-${dimension}-${query.from}-${query.to}`;
      if (!pageAsked(ctx)) {
        return sendCsv(ctx, name, csvStream(breakdownColumns(dimension), await breakdownExport(store(), sql, f, linkValuePeriods(), requestSignal(ctx))));
      }
      return sendCsv(ctx, name, toCsv(breakdownColumns(dimension), (await breakdown(store(), sql, f, linkValuePeriods(), requestSignal(ctx))).rows));
    }
    const { rows, total } = await breakdown(store(), sql, f, linkValuePeriods(), requestSignal(ctx));
    okList(ctx, rows, pagination(query.page, query.limit, total));
  });

  router.get('/analytics/realtime', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(realtimeQuerySchema, ctx.query, 'query');
    ok(ctx, await realtime(store(), sql, await scopeOf(ctx, query), Date.now(), requestSignal(ctx)));
  });

  router.get('/analytics/experiments/:linkId', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(experimentQuerySchema, ctx.query, 'query');
    const linkId = await reportedLink(ctx);
    const scope = await scopeOf(ctx, { ...query, linkId });
    const report = await experimentReport(store(), sql, { ...query, ...scope, linkId }, requestSignal(ctx));
    if ('missingControl' in report) throw new AppError('NOT_FOUND', `Rule not found on link ${linkId}: ${report.missingControl}`);
    ok(ctx, report);
  });

  router.get('/analytics/conversions', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(conversionReportQuerySchema, ctx.query, 'query');
    const scope = await scopeOf(ctx, query);
    const f = { ...query, ...scope };
    if (wantsCsv(ctx, query.format)) {
      const name = `conversions-${query.from}-${query.to}`;
      if (!pageAsked(ctx)) return sendCsv(ctx, name, await conversionsCsv(store(), f, requestSignal(ctx)));
      return sendCsv(ctx, name, toCsv(Object.keys(conversionRecordSchema.shape), (await conversionReport(store(), f, requestSignal(ctx))).report.conversions));
    }
    const { report, total } = await conversionReport(store(), f, requestSignal(ctx));
    ctx.body = { success: true, data: report, pagination: pagination(query.page, query.limit, total) };
  });

  // Registered before /analytics/:linkId so "clicks" is never read as a link id.
  router.get('/analytics/clicks', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(clickLogQuerySchema, ctx.query, 'query');
    const scope = await scopeOf(ctx, query);
    if (wantsCsv(ctx, query.format)) {
      const name = `clicks${query.from ? `-${query.from}` : ''}${query.to ? `-${query.to}` : ''}`;
      if (!pageAsked(ctx)) return sendCsv(ctx, name, await clickLogCsv(store(), scope, query, requestSignal(ctx)));
      return sendCsv(ctx, name, toCsv(Object.keys(clickLogEntrySchema.shape), (await clickLog(store(), scope, query, requestSignal(ctx))).items));
    }
    const { items, total } = await clickLog(store(), scope, query, requestSignal(ctx));
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.get('/analytics/:linkId', requireScope('analytics:read'), whileClientConnected, async (ctx) => {
    const query = parseInput(analyticsLinkQuerySchema, ctx.query, 'query');
    // Another workspace's link reads as absent, like GET /links/{id}; a deleted one's history is read.
    const linkId = await reportedLink(ctx);
    const scope = await scopeOf(ctx, { ...query, linkId });
    ok(ctx, await analyticsOverview(store(), sql, { ...query, ...scope, linkId }, requestSignal(ctx)));
  });
}

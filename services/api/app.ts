import Koa from 'koa';
import Router from '@koa/router';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Sql } from '../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { DOMAIN_RECHECK_GRACE_DEFAULT_MS, type ApiConfig } from './config.ts';
import type { OutboxPublisher } from './snapshot/outbox-publisher.ts';
import type { OutboxDrainer } from './outbox/outbox-drainer.ts';
import { noLinkCounters, type LinkCountersSource } from './link-counters.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { requestMetrics } from './middleware/request-metrics.ts';
import { jsonBody } from './middleware/json-body.ts';
import { rejectNulInUrl } from './middleware/reject-nul-in-url.ts';
import { authenticator } from './middleware/auth.ts';
import type { RateLimiter } from './middleware/rate-limit.ts';
import { linkPresentation, linkPresenter } from './link-presenter.ts';
import { linkWrites } from './link-writes.ts';
import { clicksLimitBases } from './clicks-limit-base.ts';
import { campaignStore } from './stores/campaign-store.ts';
import { domainStore } from './stores/domain-store.ts';
import { linkStore } from './stores/link-store.ts';
import { ruleStore } from './stores/rule-store.ts';
import { qrStore } from './stores/qr-store.ts';
import { tagStore } from './stores/tag-store.ts';
import { webhookStore } from './stores/webhook-store.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { campaignRoutes } from './routes/campaigns.ts';
import { healthRoutes } from './routes/health.ts';
import { linkRoutes } from './routes/links.ts';
import { linkBulkRoutes } from './routes/links-bulk.ts';
import { ruleRoutes } from './routes/rules.ts';
import { tagRoutes } from './routes/tags.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { qrRoutes } from './routes/qr.ts';
import { conversionRoutes } from './routes/conversions.ts';
import { openApiRoutes } from './routes/openapi.ts';
import { domainRoutes } from './routes/domains.ts';
import { meRoutes } from './routes/me.ts';
import { dashboardAssets } from './middleware/dashboard-assets.ts';
import { docsAssets } from './openapi/docs-assets.ts';
import { dnsVerifier, type DomainVerifier } from './domain-verifier.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';

export interface ApiDeps {
  sql: Sql;
  config: Pick<ApiConfig, 'REDIRECT_BASE_URL' | 'API_MAX_BODY_BYTES' | 'API_MAX_BULK_BODY_BYTES' | 'QR_MARKER_PARAM'> & Partial<Pick<ApiConfig, 'DNS_SERVERS' | 'DASHBOARD_DIR' | 'WEBHOOKS_ALLOW_PRIVATE_TARGETS' | 'API_KEY_CACHE_MS' | 'API_IDEMPOTENCY_LEASE_SECONDS' | 'DOMAIN_RECHECK_GRACE_MS'>>;
  logger: Logger;
  /** Publishes link snapshots to redirectors; absent when no redirector is served (e.g. API-only tests). */
  snapshot?: OutboxPublisher;
  /** Publishes queued webhook events to the bus (it polls; a test event asks at once); absent: they wait in the outbox. */
  webhookEvents?: OutboxDrainer;
  /** Link counters from ClickHouse; absent: every link reads as never clicked. */
  counters?: LinkCountersSource;
  /** The plan limits' token accounting; absent: one of the app's own (its unspent tokens are not given back at shutdown). */
  rateLimiter?: RateLimiter;
  /** Domain TXT lookups; default: DNS through config.DNS_SERVERS. */
  verifier?: DomainVerifier;
  /** The bus conversions are published on, and the secret that verifies click ids. */
  bus?: Bus;
  secret?: Buffer;
  /** ClickHouse for the analytics endpoints; absent: they answer 503. */
  analytics?: ClickHouseClient;
  /**
   * Where this instance's metrics go; default: a registry of its own (so instances in
   * one process never mix counts). Not served here: the caller serves it on the admin
   * port (admin-server.ts; npm start with the redirector's), and may fill it with more
   * (npm start adds the ingesters' and the webhooks sender's).
   */
  metrics?: Registry;
  /** The clock kept API key lookups age by (default Date.now): tests move it past API_KEY_CACHE_MS. */
  now?: () => number;
}

/** How long a request waits for its change to reach redirectors before answering anyway. */
const PUBLISH_WAIT_MS = 250;

export type RouteTable = Array<{ path: string; methods: string[] }>;

/** Builds the management API. It owns no connections: the caller opens and closes them. */
export function createApiApp(deps: ApiDeps): Koa {
  const { sql, config, logger } = deps;
  const requireScope = authenticator(sql, logger, { limiter: deps.rateLimiter, secret: deps.secret, keyCacheMs: config.API_KEY_CACHE_MS, idempotencyLeaseSeconds: config.API_IDEMPOTENCY_LEASE_SECONDS, now: deps.now });
  const campaigns = campaignStore(sql);
  const links = linkStore(sql);
  const domains = domainStore(sql, config.REDIRECT_BASE_URL);
  const rules = ruleStore(sql);
  const metrics = deps.metrics ?? createMetricsRegistry();

  /**
   * The change is committed and queued in the outbox (by trigger) whatever happens
   * here; publishing now just makes it live at once. A slow or failing bus never
   * fails the request: the publisher's loop retries. `directOnly`: the change queued
   * direct rows only (links written), so it does not wait for a fan-out queued before it
   * (a campaign-wide rule's links: migration 0032).
   */
  async function publishChanges(options?: { directOnly?: boolean }): Promise<void> {
    if (!deps.snapshot) return;
    const published = deps.snapshot.flush(options).catch((err) => logger.warn('snapshot publish failed; will retry', errorFields(err)));
    await Promise.race([published, new Promise((r) => setTimeout(r, PUBLISH_WAIT_MS).unref())]);
  }

  const router = new Router();
  // Router-level middleware runs only for matched routes, so a wrong method is a 405, not a body error.
  router.use(jsonBody(config.API_MAX_BODY_BYTES, (ctx) => (ctx.path === '/links/bulk' ? config.API_MAX_BULK_BODY_BYTES : undefined)));
  healthRoutes(router, { sql, bus: deps.bus, clickhouse: deps.analytics });
  meRoutes(router, { sql, requireScope });
  campaignRoutes(router, { campaigns, requireScope });
  const linkDeps = {
    links,
    writes: linkWrites({ links, campaigns, domains, rules, logger, limitBases: deps.bus && deps.analytics ? clicksLimitBases({ bus: deps.bus, clickhouse: deps.analytics, logger }) : undefined }),
    present: linkPresentation(linkPresenter(config.REDIRECT_BASE_URL), deps.counters ?? noLinkCounters),
    requireScope,
    rules,
    // A link's write queues its own rows (and moves its own rules), never a fan-out.
    onLinkChanged: () => publishChanges({ directOnly: true }),
  };
  // Before /links/:id, which would take "bulk" for a short code.
  linkBulkRoutes(router, linkDeps);
  linkRoutes(router, linkDeps);
  tagRoutes(router, { tags: tagStore(sql), requireScope });
  // A link rule (its link fixed for life) queues its link alone; a campaign-wide one, a fan-out.
  ruleRoutes(router, { rules, requireScope, onRuleChanged: (rule) => publishChanges({ directOnly: rule.linkId !== null }) });
  qrRoutes(router, { qr: qrStore(sql), links, presentLink: linkPresenter(config.REDIRECT_BASE_URL), requireScope, qrMarkerParam: config.QR_MARKER_PARAM });
  conversionRoutes(router, { sql, requireScope, bus: deps.bus, secret: deps.secret });
  domainRoutes(router, { domains, verifier: deps.verifier ?? dnsVerifier(config.DNS_SERVERS ?? []), requireScope, onDomainChanged: publishChanges, recheckGraceMs: config.DOMAIN_RECHECK_GRACE_MS ?? DOMAIN_RECHECK_GRACE_DEFAULT_MS });
  webhookRoutes(router, {
    webhooks: webhookStore(sql),
    requireScope,
    secret: deps.secret,
    allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS ?? false,
    onEventQueued: async () => {
      await deps.webhookEvents?.flush().catch((err) => logger.warn('webhook event publish failed; will retry', errorFields(err)));
    },
  });
  openApiRoutes(router);
  analyticsRoutes(router, { sql, links, requireScope, analytics: deps.analytics, logger });

  const app = new Koa();
  // The routes the router knows, for the test that holds the OpenAPI document to them.
  (app.context as { routeTable?: RouteTable }).routeTable = router.stack.map((layer) => ({ path: String(layer.path), methods: layer.methods }));
  app.proxy = false;
  app.silent = true;
  app.use(requestMetrics(metrics));
  app.use(errorHandler(logger));
  app.use(rejectNulInUrl);
  if (config.DASHBOARD_DIR) app.use(dashboardAssets(config.DASHBOARD_DIR));
  app.use(docsAssets());
  app.use(router.routes());
  // Not in throw mode: only then does the router set `Allow` on a 405 (RFC 9110 requires
  // it); the error handler turns the bare 405 or 501 into the error envelope.
  app.use(router.allowedMethods());
  return app;
}

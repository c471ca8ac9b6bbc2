import { openDatabase } from '../../shared/db/open-database.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { natsTarget } from '../../shared/config/nats-env.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { watchShutdownSignals } from '../../shared/shutdown.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig, localShortUrlWarning } from './config.ts';
import { resolveExistingSecret, resolveSecret } from '../../shared/config/secret.ts';
import { listen } from './server.ts';
import type { OutboxPublisher } from './snapshot/outbox-publisher.ts';
import { startSnapshotPublishing, type SnapshotPublishing } from './snapshot/snapshot-publishing.ts';
import { clickHouseLinkCounters } from './link-counters.ts';
import { rateLimiter } from './middleware/rate-limit.ts';
import { linkPresenter } from './link-presenter.ts';
import type { OutboxDrainer } from './outbox/outbox-drainer.ts';
import { startWebhookEventPublishing } from './outbox/webhook-outbox-publisher.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import { startApiAdminServer } from './admin-server.ts';
import { startDomainRechecks } from './domain-rechecks.ts';
import { configOrExit } from '../../shared/config/config-or-exit.ts';

const config = configOrExit('api', () => loadApiConfig());
const logger = createLogger('api', config.LOG_LEVEL);
// Before anything starts: a signal during start-up stops the service once started.
const signals = watchShutdownSignals(logger);
const shortUrlWarning = localShortUrlWarning(config);
if (shortUrlWarning) logger.warn(shortUrlWarning);

try {
  // With NATS the API serves redirectors, whose click ids it verifies and whose secret the
  // webhooks senders share: a secret of its own would match none of theirs (404 "Click not
  // found" on every conversion), so it takes theirs or refuses. Alone, it makes its own.
  const secret = config.NATS_URL
    ? await resolveExistingSecret(config.LINKROUTE_SECRET, config.DATA_DIR, 'an API serving redirectors (NATS_URL set)')
    : await resolveSecret(config.LINKROUTE_SECRET, config.DATA_DIR);
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, applicationName: 'linkroute-api', answerTimeoutMs: config.API_POSTGRES_TIMEOUT_MS });
  await migrate(db.sql, logger);
  let bus: Bus | null = null;
  let snapshot: OutboxPublisher | undefined;
  let publishing: SnapshotPublishing | undefined;
  let webhookEvents: OutboxDrainer | undefined;
  if (config.NATS_URL) {
    bus = await connectNatsBus(natsTarget(config)!, { name: 'linkroute-api', logger, replicas: config.NATS_STREAM_REPLICAS, eventsRetentionHours: config.NATS_EVENTS_RETENTION_HOURS });
    // The outbox publisher (seeding an empty bucket) and the snapshot compactor.
    publishing = await startSnapshotPublishing({ sql: db.sql, bus, logger, config });
    snapshot = publishing.publisher;
    // Link events for webhooks, from their own outbox.
    webhookEvents = startWebhookEventPublishing({ sql: db.sql, bus, presentLink: linkPresenter(config.REDIRECT_BASE_URL), logger });
  } else {
    // Changes stay queued in the outbox and are published once an API runs with NATS_URL.
    logger.warn('NATS_URL is not set: link changes are not pushed to redirectors');
  }
  const clickhouse = config.CLICKHOUSE_URL ? connectClickHouse(config.CLICKHOUSE_URL) : null;
  if (!clickhouse) logger.warn('CLICKHOUSE_URL is not set: link counters read 0, analytics answer 503');
  const counters = clickhouse ? clickHouseLinkCounters(clickhouse, logger) : undefined;
  const limiter = rateLimiter(db.sql, logger);
  const metrics = createMetricsRegistry();
  const admin = await startApiAdminServer({ config, registry: metrics, sql: db.sql, bus, clickhouse, logger });
  const rechecks = startDomainRechecks({ sql: db.sql, config, logger, onDomainFailed: async () => snapshot?.flush() });
  const server = await listen(createApiApp({ sql: db.sql, config, logger, secret, rateLimiter: limiter, metrics, ...(bus ? { bus } : {}), ...(snapshot ? { snapshot } : {}), ...(webhookEvents ? { webhookEvents } : {}), ...(counters ? { counters } : {}), ...(clickhouse ? { analytics: clickhouse } : {}) }), config.API_PORT, config.HOST);
  logger.info('api listening', { url: server.url, dashboard: `${server.url}/dashboard`, adminUrl: admin.url, database: db.description });
  signals.started(async () => {
    // In-flight requests finish first; then the outbox loop stops (what it has not
    // published stays queued for the next API; a compaction under way is abandoned),
    // and connections close.
    await server.close();
    counters?.stop(); // no more reading ahead
    await admin.close();
    // Unspent rate-limit tokens go back to the workspaces' windows for the other instances.
    await limiter.close();
    await rechecks.stop();
    await publishing?.stop();
    await webhookEvents?.stop();
    await bus?.close();
    await clickhouse?.close();
    await db.close();
  });
} catch (err) {
  logger.error('api failed to start', errorFields(err));
  process.exit(1);
}

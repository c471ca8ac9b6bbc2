/**
 * `npm start`: every part of linkroute in one process on embedded defaults.
 * This is a composition root, not a service: the one module allowed to import
 * several services' factories and wire them together, over the in-process bus
 * (or NATS when NATS_URL is set).
 */
import { join } from 'node:path';
import { openDatabase } from '../../shared/db/open-database.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { countWorkspaces, createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { eventSubjects } from '../../shared/schemas/click-event.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { natsTarget } from '../../shared/config/nats-env.ts';
import { resolveExistingSecret, resolveSecret } from '../../shared/config/secret.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { watchShutdownSignals } from '../../shared/shutdown.ts';
import { createApiApp } from '../api/app.ts';
import { startDomainRechecks } from '../api/domain-rechecks.ts';
import { rateLimiter } from '../api/middleware/rate-limit.ts';
import { localShortUrlWarning, withRedirectorPort } from '../api/config.ts';
import { listen } from '../api/server.ts';
import { startSnapshotPublishing } from '../api/snapshot/snapshot-publishing.ts';
import { clickHouseLinkCounters } from '../api/link-counters.ts';
import { startRedirector } from '../redirector/redirector.ts';
import { startEventIngesters } from '../ingester/event-ingesters.ts';
import { startWebhooks } from '../webhooks/webhooks.ts';
import { linkPresenter } from '../api/link-presenter.ts';
import { startWebhookEventPublishing } from '../api/outbox/webhook-outbox-publisher.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import { startEmbeddedClickHouse } from '../clickhouse-embedded/embedded-clickhouse.ts';
import { embeddedClickHousePassword } from '../clickhouse-embedded/password.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouseAt } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { migrateClickHouseExclusively } from '../../shared/clickhouse/migrate-exclusively.ts';
import { restoreClickCounts } from './restore-click-counts.ts';
import { startSideBySide } from '../../shared/start-side-by-side.ts';
import { configOrExit } from '../../shared/config/config-or-exit.ts';
import { loadAllInOneConfig } from './config.ts';

const { api: config, redirector: redirectorConfig, ingester: ingesterConfig, webhooks: webhooksConfig } = configOrExit('linkroute', () => loadAllInOneConfig());
const logger = createLogger('linkroute', config.LOG_LEVEL);
// Before anything starts: a signal during start-up stops the service once started.
const signals = watchShutdownSignals(logger);

try {
  // On a shared NATS its ingester reads every redirector's clicks and its API verifies their
  // click ids: a secret of its own would dead-letter their clicks as forged. So it takes
  // theirs or refuses, before it touches a store, as a standalone API with NATS does.
  // On the in-process bus it is alone and makes its own.
  const secret = config.NATS_URL
    ? await resolveExistingSecret(redirectorConfig.LINKROUTE_SECRET, config.DATA_DIR, '`npm start` with NATS_URL set (it shares NATS with other services)')
    : await resolveSecret(redirectorConfig.LINKROUTE_SECRET, config.DATA_DIR);
  const memoryBus = config.NATS_URL ? null : createMemoryBus();
  // Postgres and ClickHouse start side by side, each migrated: the embedded ClickHouse's
  // start and migrations go on while the embedded Postgres opens (a first start's initdb:
  // 5 s of CPU). Only partly: that initdb holds this thread, which also serves the engine's
  // HTTP (measured: a first start 0.35 s sooner, a restart 0.15 s). A failure of one is
  // reported once the other has settled: never in the middle of its migrations.
  const [db, { bus, embeddedClickHouse, clickhouseUrl }] = await startSideBySide([
    (async () => {
      const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, applicationName: 'linkroute', answerTimeoutMs: config.API_POSTGRES_TIMEOUT_MS });
      await migrate(db.sql, logger);
      return db;
    })(),
    (async () => {
      const bus = memoryBus ?? (await connectNatsBus(natsTarget(config)!, { name: 'linkroute', logger, replicas: config.NATS_STREAM_REPLICAS, eventsRetentionHours: config.NATS_EVENTS_RETENTION_HOURS }));
      const embeddedClickHouse = config.CLICKHOUSE_URL
        ? null
        : await startEmbeddedClickHouse({ dataDir: join(config.DATA_DIR, 'clickhouse'), logger, password: (await embeddedClickHousePassword(undefined, config.DATA_DIR)).value });
      const clickhouseUrl = config.CLICKHOUSE_URL ?? embeddedClickHouse!.url;
      // On the in-process bus its lease reaches this process alone: exclusive only for the
      // embedded engine it owns, not for a CLICKHOUSE_URL other processes may migrate too.
      if (config.NATS_URL || embeddedClickHouse) await migrateClickHouseExclusively(clickhouseUrl, { bus, logger });
      else await migrateClickHouseAt(clickhouseUrl, { logger });
      return { bus, embeddedClickHouse, clickhouseUrl };
    })(),
  ]);
  const clickhouse = connectClickHouse(clickhouseUrl);
  // The ingesters and the webhooks sender have no HTTP server here: their metrics go with the
  // API's, and all of them are served with the redirector's on its admin port (ADMIN_PORT).
  const apiMetrics = createMetricsRegistry();
  const ingesters = startEventIngesters({ bus, clickhouse, logger, config: ingesterConfig, metrics: apiMetrics, secret });

  // Compacts the snapshot only on NATS (see startSnapshotPublishing).
  const publishing = await startSnapshotPublishing({ sql: db.sql, bus, logger, config });
  const snapshot = publishing.publisher;
  await snapshot.flush(); // the redirector below starts with every link
  // The in-process bus forgot the shared click counts: without them limits reached before a restart would reopen.
  if (memoryBus !== null) await restoreClickCounts({ sql: db.sql, clickhouse, bus });
  const redirector = await startRedirector({ config: redirectorConfig, bus, secret, logger, adminMetrics: [apiMetrics] });
  // Short URLs point where the redirector listens (REDIRECT_PORT=0 is known only now).
  const apiConfig = withRedirectorPort(config, redirector.port);
  const shortUrlWarning = localShortUrlWarning(apiConfig);
  if (shortUrlWarning) logger.warn(shortUrlWarning);
  const webhookEvents = startWebhookEventPublishing({ sql: db.sql, bus, presentLink: linkPresenter(apiConfig.REDIRECT_BASE_URL), logger });
  const webhooks = await startWebhooks({ sql: db.sql, bus, secret, logger, config: webhooksConfig, metrics: apiMetrics });
  const limiter = rateLimiter(db.sql, logger);
  const counters = clickHouseLinkCounters(clickhouse, logger);
  const rechecks = startDomainRechecks({ sql: db.sql, config: apiConfig, logger, onDomainFailed: () => snapshot.flush() });
  const api = await listen(
    createApiApp({
      sql: db.sql,
      config: apiConfig,
      logger,
      rateLimiter: limiter,
      snapshot,
      webhookEvents,
      bus,
      secret,
      counters,
      analytics: clickhouse,
      metrics: apiMetrics,
    }),
    config.API_PORT,
    config.HOST,
  );
  logger.info('linkroute started', {
    api: api.url,
    redirector: redirector.url,
    admin: redirector.adminUrl,
    database: db.description,
    bus: bus.kind,
    clickhouse: embeddedClickHouse ? `embedded chDB in ${config.DATA_DIR}/clickhouse on ${embeddedClickHouse.address}` : 'CLICKHOUSE_URL',
  });

  // First start on an empty database: make a workspace and show its key, once.
  if ((await countWorkspaces(db.sql)) === 0) {
    const workspace = await createWorkspace(db.sql, { name: 'Default workspace', plan: 'enterprise' });
    const key = await createApiKey(db.sql, { workspaceId: workspace.id, name: 'first key' });
    process.stdout.write(
      [
        '',
        `Created workspace ${workspace.id} with an API key. It is shown only this once; keep it:`,
        '',
        `  export LINKROUTE_API_KEY=${key.key}`,
        '',
        `Sign in to the dashboard with it: ${api.url}/dashboard`,
        '',
        'Try it:',
        `  curl -s -H "Authorization: Bearer $LINKROUTE_API_KEY" ${api.url}/links`,
        '',
        'More keys: npm run cli -- key create --workspace ' + workspace.id,
        '',
      ].join('\n'),
    );
  }
  process.stdout.write(`linkroute redirects on ${redirector.url}\n`);
  process.stdout.write(`linkroute API on ${api.url}\n`);
  process.stdout.write(`linkroute dashboard on ${api.url}/dashboard\n`);
  process.stdout.write(`linkroute metrics on ${redirector.adminUrl}/metrics (readiness: ${redirector.adminUrl}/ready)\n`);

  /** Clicks a forced exit loses: the redirector's unpublished buffer, and on the in-process bus whatever is not stored yet. */
  const clicksNotStored = () => redirector.events.stats().buffered + (memoryBus?.unacknowledgedEvents(eventSubjects.clicks) ?? 0);
  const shutdown = async () => {
    await api.close();
    counters.stop(); // no more reading ahead
    await limiter.close(); // unspent rate-limit tokens back to their windows
    await rechecks.stop();
    await redirector.close(); // publishes buffered clicks
    // Store what they hold; on the in-process bus, everything it holds (it dies with the process).
    await ingesters.stop({ drain: memoryBus !== null });
    await publishing.stop();
    await webhookEvents.stop();
    await webhooks.stop(); // finishes and records the attempts under way
    await bus.close();
    await clickhouse.close();
    await embeddedClickHouse?.stop();
    await db.close();
  };
  signals.started(shutdown, { unfinished: () => ({ clicksDropped: clicksNotStored() }) });
} catch (err) {
  logger.error('linkroute failed to start', errorFields(err));
  process.exit(1);
}

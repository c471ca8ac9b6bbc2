import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { requireSettings } from '../../shared/config/config-error.ts';
import { natsTarget } from '../../shared/config/nats-env.ts';
import { resolveExistingSecret } from '../../shared/config/secret.ts';
import { openDatabase } from '../../shared/db/open-database.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { checkBus, checkQuery } from '../../shared/health/dependency-checks.ts';
import { startHealthServer } from '../../shared/health/health-server.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import { watchShutdownSignals } from '../../shared/shutdown.ts';
import { loadWebhooksConfig } from './config.ts';
import { startWebhooks, type RunningWebhooks } from './webhooks.ts';
import { configOrExit } from '../../shared/config/config-or-exit.ts';

const config = configOrExit('webhooks', () => loadWebhooksConfig());
const logger = createLogger('webhooks', config.LOG_LEVEL);
// Before anything starts: a signal during start-up stops the service once started.
const signals = watchShutdownSignals(logger);

try {
  requireSettings(config, ['NATS_URL', 'DATABASE_URL'], 'for a standalone webhooks sender (npm start runs one in its own process)');
  // Before any store is reached: with a secret of its own it could unseal no endpoint's signing secret.
  const secret = await resolveExistingSecret(config.LINKROUTE_SECRET, config.DATA_DIR, 'a standalone webhooks sender');
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, applicationName: 'linkroute-webhooks', answerTimeoutMs: config.WEBHOOKS_POSTGRES_TIMEOUT_MS });
  await migrate(db.sql, logger);
  const bus = await connectNatsBus(natsTarget(config)!, { name: 'linkroute-webhooks', logger, replicas: config.NATS_STREAM_REPLICAS, eventsRetentionHours: config.NATS_EVENTS_RETENTION_HOURS });
  const metrics = createMetricsRegistry();
  // Listening first: a taken port fails the start before any event is taken.
  let webhooks: RunningWebhooks | null = null;
  const http = await startHealthServer({
    port: config.WEBHOOKS_PORT,
    host: config.HOST,
    registry: metrics,
    // Not ready until it reads events: opening its consumers waits out a NATS failover. Nor
    // while its secret opens no endpoint's: it then signs nothing, and leaves it all to others.
    checks: async () => ({ postgres: await checkQuery(db.sql`SELECT 1`), nats: checkBus(bus), sender: webhooks ? webhooks.signing() : 'starting' }),
    logger,
  });
  const running = await startWebhooks({ sql: db.sql, bus, secret, logger, config, metrics });
  webhooks = running;
  logger.info('webhooks sender running', { url: http.url, allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS });
  signals.started(async () => {
    // Attempts under way finish and are recorded; events not yet stored are redelivered to a peer.
    await running.stop();
    await http.close();
    await bus.close();
    await db.close();
  });
} catch (err) {
  logger.error('webhooks sender failed to start', errorFields(err));
  process.exit(1);
}

import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { requireSettings } from '../../shared/config/config-error.ts';
import { natsTarget } from '../../shared/config/nats-env.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouseExclusively } from '../../shared/clickhouse/migrate-exclusively.ts';
import { checkBus, checkClickHouse } from '../../shared/health/dependency-checks.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import { watchShutdownSignals } from '../../shared/shutdown.ts';
import { resolveExistingSecret } from '../../shared/config/secret.ts';
import { loadIngesterConfig } from './config.ts';
import { startEventIngesters, type EventIngesters } from './event-ingesters.ts';
import { startHealthServer } from '../../shared/health/health-server.ts';
import { configOrExit } from '../../shared/config/config-or-exit.ts';

const config = configOrExit('ingester', () => loadIngesterConfig());
const logger = createLogger('ingester', config.LOG_LEVEL);
// Before anything starts: a signal during start-up stops the service once started.
const signals = watchShutdownSignals(logger);

try {
  requireSettings(config, ['NATS_URL', 'CLICKHOUSE_URL'], 'for a standalone ingester (npm run clickhouse:embedded serves a local ClickHouse)');
  // First: an ingester with a secret of its own would take every click for forged.
  const secret = await resolveExistingSecret(config.LINKROUTE_SECRET, config.DATA_DIR, 'a standalone ingester');
  const bus = await connectNatsBus(natsTarget(config)!, { name: 'linkroute-ingester', logger, replicas: config.NATS_STREAM_REPLICAS, eventsRetentionHours: config.NATS_EVENTS_RETENTION_HOURS });
  await migrateClickHouseExclusively(config.CLICKHOUSE_URL, { bus, logger });
  const clickhouse = connectClickHouse(config.CLICKHOUSE_URL);
  // Listening first: a taken port fails the start before any event is consumed.
  const metrics = createMetricsRegistry();
  let ingesters: EventIngesters | null = null;
  const http = await startHealthServer({
    port: config.INGEST_PORT,
    host: config.HOST,
    registry: metrics,
    // Ready when it does its work: takes events from NATS (its consumers open) and stores them in ClickHouse.
    checks: async () => ({ nats: checkBus(bus), clickhouse: await checkClickHouse(clickhouse), consumers: ingesters?.readiness() ?? 'opening' }),
    logger,
  });
  const started = startEventIngesters({ bus, clickhouse, logger, config, metrics, secret });
  ingesters = started;

  logger.info('ingester running', { consumers: started.count, url: http.url });
  signals.started(async () => {
    // Finish and acknowledge the batch in hand; anything unacknowledged is redelivered to a peer.
    await started.stop();
    await http.close();
    await bus.close();
    await clickhouse.close();
  });
} catch (err) {
  logger.error('ingester failed to start', errorFields(err));
  process.exit(1);
}

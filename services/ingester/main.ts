import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { loadIngesterConfig } from './config.ts';
import { startIngester } from './ingester.ts';

const config = loadIngesterConfig();
const logger = createLogger('ingester', config.LOG_LEVEL);

try {
  if (!config.NATS_URL || !config.CLICKHOUSE_URL) {
    throw new Error('NATS_URL and CLICKHOUSE_URL are required for a standalone ingester (npm run clickhouse:embedded serves a local ClickHouse)');
  }
  const bus = await connectNatsBus(config.NATS_URL, { name: 'linkroute-ingester', logger });
  const clickhouse = connectClickHouse(config.CLICKHOUSE_URL);
  await migrateClickHouse(clickhouse);
  const ingester = startIngester({ bus, clickhouse, logger, consumerName: config.INGEST_CONSUMER, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS });
  logger.info('ingester running', { consumer: config.INGEST_CONSUMER });
  const shutdown = async () => {
    // Finish and acknowledge the batch in hand; anything unacknowledged is redelivered to a peer.
    await ingester.stop();
    await bus.close();
    await clickhouse.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} catch (err) {
  logger.error('ingester failed to start', errorFields(err));
  process.exit(1);
}

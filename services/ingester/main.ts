import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { loadIngesterConfig } from './config.ts';
import { startIngester } from './ingester.ts';
import { clickEvents, conversionEvents } from './event-tables.ts';

const config = loadIngesterConfig();
const logger = createLogger('ingester', config.LOG_LEVEL);

try {
  if (!config.NATS_URL || !config.CLICKHOUSE_URL) {
    throw new Error('NATS_URL and CLICKHOUSE_URL are required for a standalone ingester (npm run clickhouse:embedded serves a local ClickHouse)');
  }
  const bus = await connectNatsBus(config.NATS_URL, { name: 'linkroute-ingester', logger });
  const clickhouse = connectClickHouse(config.CLICKHOUSE_URL);
  await migrateClickHouse(clickhouse);
  // Clicks and conversions, each with its own durable consumer (shared by every ingester process).
  const ingesters = [
    startIngester({ kind: clickEvents, bus, clickhouse, logger, consumerName: `${config.INGEST_CONSUMER}-clicks`, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS }),
    startIngester({ kind: conversionEvents, bus, clickhouse, logger, consumerName: `${config.INGEST_CONSUMER}-conversions`, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS }),
  ];


  logger.info('ingester running', { consumers: ingesters.length });
  const shutdown = async () => {
    // Finish and acknowledge the batch in hand; anything unacknowledged is redelivered to a peer.
    await Promise.all(ingesters.map((i) => i.stop()));
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

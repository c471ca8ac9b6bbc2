import { join } from 'node:path';
import { startEmbeddedClickHouse } from './embedded-clickhouse.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { loadClickHouseEmbeddedConfig } from './config.ts';

/**
 * The embedded ClickHouse (chDB) endpoint as a process of its own, data under
 * $DATA_DIR/clickhouse. Other processes reach it with CLICKHOUSE_URL set to the
 * logged URL. A local stand-in, never production (see embedded-clickhouse.ts).
 */
const config = loadClickHouseEmbeddedConfig();
const logger = createLogger('clickhouse-embedded', config.LOG_LEVEL);

try {
  const dataDir = join(config.DATA_DIR, 'clickhouse');
  if (!['127.0.0.1', '::1', 'localhost'].includes(config.HOST)) {
    logger.warn('the embedded ClickHouse has no authentication and can read and write local files; it should listen on loopback only', { host: config.HOST });
  }
  const clickhouse = await startEmbeddedClickHouse({ dataDir, host: config.HOST, port: config.CLICKHOUSE_PORT, logger });
  logger.info('embedded ClickHouse listening', { url: clickhouse.url, dataDir });

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await clickhouse.stop();
      process.exit(0);
    } catch (err) {
      logger.error('embedded ClickHouse did not stop cleanly', errorFields(err));
      process.exit(1);
    }
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} catch (err) {
  logger.error('embedded ClickHouse failed to start', errorFields(err));
  process.exit(1);
}

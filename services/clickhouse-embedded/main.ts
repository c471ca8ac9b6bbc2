import { join } from 'node:path';
import { startEmbeddedClickHouse } from './embedded-clickhouse.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { watchShutdownSignals } from '../../shared/shutdown.ts';
import { loadClickHouseEmbeddedConfig } from './config.ts';
import { embeddedClickHousePassword } from './password.ts';
import { configOrExit } from '../../shared/config/config-or-exit.ts';

/**
 * The embedded ClickHouse (chDB) endpoint as a process of its own, data under
 * $DATA_DIR/clickhouse. Other processes reach it with CLICKHOUSE_URL set to the
 * logged address with the password in it (`http://default:<password>@host:port`).
 * A local stand-in, never production (see embedded-clickhouse.ts).
 */
const config = configOrExit('clickhouse-embedded', () => loadClickHouseEmbeddedConfig());
const logger = createLogger('clickhouse-embedded', config.LOG_LEVEL);
// Before anything starts: a signal during start-up stops the service once started.
const signals = watchShutdownSignals(logger);

try {
  const dataDir = join(config.DATA_DIR, 'clickhouse');
  if (!['127.0.0.1', '::1', 'localhost'].includes(config.HOST)) {
    logger.warn('the embedded ClickHouse can read and write local files; it should listen on loopback only', { host: config.HOST });
  }
  const password = await embeddedClickHousePassword(config.CLICKHOUSE_PASSWORD, config.DATA_DIR);
  const clickhouse = await startEmbeddedClickHouse({ dataDir, host: config.HOST, port: config.CLICKHOUSE_PORT, logger, password: password.value });
  logger.info('embedded ClickHouse listening', { url: clickhouse.address, user: 'default', password: password.source, dataDir });

  // Finishes the statement under way (an insert lands whole or not at all), then closes the engine.
  signals.started(() => clickhouse.stop());
} catch (err) {
  logger.error('embedded ClickHouse failed to start', errorFields(err));
  process.exit(1);
}

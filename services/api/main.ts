import { openDatabase } from '../../shared/db/open-database.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen } from './server.ts';

const config = loadApiConfig();
const logger = createLogger('api', config.LOG_LEVEL);

try {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, applicationName: 'linkroute-api' });
  await migrate(db.sql);
  const server = await listen(createApiApp({ sql: db.sql, config, logger }), config.API_PORT, config.HOST);
  logger.info('api listening', { url: server.url, database: db.description });
  const shutdown = async () => {
    await server.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} catch (err) {
  logger.error('api failed to start', errorFields(err));
  process.exit(1);
}

/**
 * `npm start`: every part of linkroute in one process on embedded defaults.
 * This is a composition root, not a service: the one module allowed to import
 * several services' factories and wire them together.
 */
import { openDatabase } from '../../shared/db/open-database.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { countWorkspaces, createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { createApiApp } from '../api/app.ts';
import { loadApiConfig } from '../api/config.ts';
import { listen } from '../api/server.ts';

const config = loadApiConfig();
const logger = createLogger('linkroute', config.LOG_LEVEL);

try {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, applicationName: 'linkroute' });
  await migrate(db.sql);
  const api = await listen(createApiApp({ sql: db.sql, config, logger }), config.API_PORT, config.HOST);
  logger.info('api listening', { url: api.url, database: db.description });

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
        'Try it:',
        `  curl -s -H "Authorization: Bearer $LINKROUTE_API_KEY" ${api.url}/links`,
        '',
        'More keys: npm run cli -- key create --workspace ' + workspace.id,
        '',
      ].join('\n'),
    );
  }
  process.stdout.write(`linkroute API on ${api.url}\n`);

  const shutdown = async () => {
    await api.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} catch (err) {
  logger.error('linkroute failed to start', errorFields(err));
  process.exit(1);
}

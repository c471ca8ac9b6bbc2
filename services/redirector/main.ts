import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { resolveSecret } from '../../shared/config/secret.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { handleShutdown } from '../../shared/shutdown.ts';
import { loadRedirectorConfig } from './config.ts';
import { startRedirector } from './redirector.ts';

const config = loadRedirectorConfig();
const logger = createLogger('redirector', config.LOG_LEVEL);

try {
  if (!config.NATS_URL) {
    throw new Error('NATS_URL is required: a standalone redirector gets its snapshot and sends its clicks over NATS (npm start runs everything in one process without it)');
  }
  const bus = await connectNatsBus(config.NATS_URL, { name: 'linkroute-redirector', logger });
  const secret = await resolveSecret(config.LINKROUTE_SECRET, config.DATA_DIR);
  const redirector = await startRedirector({ config, bus, secret, logger });
  handleShutdown(logger, async () => {
    // Stops taking requests, then publishes the clicks it buffered (bounded), then disconnects.
    await redirector.close();
    await bus.close();
  });
} catch (err) {
  logger.error('redirector failed to start', errorFields(err));
  process.exit(1);
}

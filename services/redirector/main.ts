import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { requireSettings } from '../../shared/config/config-error.ts';
import { natsTarget } from '../../shared/config/nats-env.ts';
import { resolveSecret } from '../../shared/config/secret.ts';
import { createLogger, errorFields } from '../../shared/logger.ts';
import { watchShutdownSignals } from '../../shared/shutdown.ts';
import { loadRedirectorConfig } from './config.ts';
import { startRedirector } from './redirector.ts';
import { configOrExit } from '../../shared/config/config-or-exit.ts';

const config = configOrExit('redirector', () => loadRedirectorConfig());
const logger = createLogger('redirector', config.LOG_LEVEL);
// Before anything starts: a signal during start-up stops the service once started.
const signals = watchShutdownSignals(logger);

try {
  requireSettings(config, ['NATS_URL'], 'for a standalone redirector: it gets its snapshot and sends its clicks over NATS (npm start runs everything in one process without it)');
  const bus = await connectNatsBus(natsTarget(config)!, { name: 'linkroute-redirector', logger, replicas: config.NATS_STREAM_REPLICAS, eventsRetentionHours: config.NATS_EVENTS_RETENTION_HOURS });
  const secret = await resolveSecret(config.LINKROUTE_SECRET, config.DATA_DIR);
  const redirector = await startRedirector({ config, bus, secret, logger });
  signals.started(
    async (msLeft) => {
      // Stops taking requests, then publishes the clicks it buffered (bounded), then disconnects.
      // While NATS is away it keeps trying until shortly before the shutdown timeout (counted
      // from the signal, which may have come while it was starting).
      await redirector.close(Math.max(0, msLeft - 5_000));
      await bus.close();
    },
    // Published clicks are NATS's to keep; only the buffer dies with the process.
    { unfinished: () => ({ clicksDropped: redirector.events.stats().buffered }) },
  );
} catch (err) {
  logger.error('redirector failed to start', errorFields(err));
  process.exit(1);
}

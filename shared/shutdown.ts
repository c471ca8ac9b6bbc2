import { errorFields, type Logger } from './logger.ts';

/** Under the 30 s most orchestrators give between SIGTERM and SIGKILL (docker-compose.yml sets 30 s too). */
export const SHUTDOWN_TIMEOUT_MS = 25_000;

/**
 * A service's way out. SIGTERM (orchestrators) and SIGINT (Ctrl-C) run `stop` once:
 * stop taking work, finish and acknowledge what is in hand, close connections; then
 * exit 0. `stop` running past `timeoutMs`, or failing, or a second signal, exits 1 at
 * once and says so: a stuck dependency must not hold the process until a silent SIGKILL.
 * Crashes leave a JSON log line like everything else (Node's default is a bare stack
 * on stderr) and exit 1, as Node would.
 */
export function handleShutdown(logger: Logger, stop: () => Promise<void>, timeoutMs = SHUTDOWN_TIMEOUT_MS): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn('second signal while stopping; exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('stopping', { signal });
    const started = Date.now();
    setTimeout(() => {
      logger.error('stopping took too long; exiting', { timeoutMs });
      process.exit(1);
    }, timeoutMs).unref();
    stop().then(
      () => {
        logger.info('stopped', { ms: Date.now() - started });
        process.exit(0);
      },
      (err: unknown) => {
        logger.error('stopping failed', errorFields(err));
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', errorFields(err));
    process.exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    logger.error('unhandled promise rejection', errorFields(reason));
    process.exit(1);
  });
}

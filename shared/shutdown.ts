import { errorFields, type Logger } from './logger.ts';

/** Under the 30 s most orchestrators give between SIGTERM and SIGKILL (docker-compose.yml sets 30 s too). */
export const SHUTDOWN_TIMEOUT_MS = 25_000;

/**
 * A signal this soon after the first is the same request to stop, not a second one. A
 * terminal's Ctrl-C goes to the whole process group, and a parent (npm, a shell, a process
 * manager) may relay it to us again within milliseconds; a person who means "now" presses
 * again later than this.
 */
export const REPEATED_SIGNAL_MS = 1_000;

export interface ShutdownOptions {
  /**
   * What exiting at once would lose, for the log of a forced exit (a second signal, the
   * timeout): e.g. `{ clicksDropped: 12 }`. Called at that moment, so it must not throw.
   */
  unfinished?: () => Record<string, number>;
}

/**
 * What a signal runs. `msLeft`: how long it has before the process exits 1, counted from
 * the signal (less than SHUTDOWN_TIMEOUT_MS when the signal came while starting), for a
 * stop that retries until shortly before then.
 */
export type Stop = (msLeft: number) => Promise<void>;

/** A service's signal handling, installed before it starts (watchShutdownSignals). */
export interface ShutdownSignals {
  /**
   * The service has started: `stop` is what a signal runs, at once if one came while it
   * was starting. Called once.
   */
  started(stop: Stop, options?: ShutdownOptions): void;
}

/**
 * A service's way out. SIGTERM (orchestrators) and SIGINT (Ctrl-C) run `stop` once:
 * stop taking work, finish and acknowledge what is in hand, close connections; then
 * exit 0. Repeats of the signal within REPEATED_SIGNAL_MS are that same stop. `stop`
 * running past SHUTDOWN_TIMEOUT_MS, or failing, or another signal later than that, exits 1 at
 * once and logs what is left unfinished: a stuck dependency must not hold the process
 * until a silent SIGKILL, and a person pressing Ctrl-C twice means it.
 * Installed first thing in a service's main: a signal while it starts (opening an
 * embedded database, waiting for NATS) is taken, said, and stops the service once
 * started, instead of Node's default of dying silently in the middle of a step (an
 * embedded store's files half written). Its timeout counts from the signal, so a start
 * that hangs still ends. A start that fails exits 1 as before.
 * Crashes leave a JSON log line like everything else (Node's default is a bare stack
 * on stderr) and exit 1, as Node would.
 */
export function watchShutdownSignals(logger: Logger): ShutdownSignals {
  let stop: Stop | undefined;
  let options: ShutdownOptions = {};
  const unfinished = () => options.unfinished?.() ?? {};
  let firstSignalAt = 0;
  const runStop = (run: Stop) => {
    run(SHUTDOWN_TIMEOUT_MS - (Date.now() - firstSignalAt)).then(
      () => {
        logger.info('stopped', { ms: Date.now() - firstSignalAt });
        process.exit(0);
      },
      (err: unknown) => {
        logger.error('stopping failed', { ...errorFields(err), ...unfinished() });
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt > 0) {
      if (Date.now() - firstSignalAt < REPEATED_SIGNAL_MS) {
        logger.info('signal repeated while stopping; still stopping gracefully', { signal });
        return;
      }
      logger.warn('second signal while stopping; exiting now', { signal, ...unfinished() });
      process.exit(1);
    }
    firstSignalAt = Date.now();
    setTimeout(() => {
      logger.error(stop ? 'stopping took too long; exiting' : 'starting took too long after a signal to stop; exiting', { timeoutMs: SHUTDOWN_TIMEOUT_MS, ...unfinished() });
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    if (stop) {
      logger.info('stopping', { signal });
      runStop(stop);
    } else {
      logger.info('stopping once started: the signal came while starting', { signal });
    }
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
  return {
    started(stopService, given = {}) {
      stop = stopService;
      options = given;
      if (firstSignalAt > 0) {
        logger.info('stopping', { signalWhileStarting: true });
        runStop(stop);
      }
    },
  };
}

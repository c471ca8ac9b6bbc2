import { createLogger, errorFields } from '../logger.ts';
import { ConfigError } from './config-error.ts';

/**
 * A service's configuration, or, when the environment cannot be used, one JSON log line
 * naming every bad setting (no stack: the fix is in the message, not in our code) and
 * exit 1. Any other error is a bug and is thrown as it is.
 */
export function configOrExit<C>(service: string, load: () => C): C {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    createLogger(service).error(`${service} cannot start: invalid configuration`, errorFields(err));
    process.exit(1);
  }
}

import { ConfigError } from './config/config-error.ts';

/** Structured JSON logs, one object per line, to stderr so stdout stays for program output. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(service: string, level: LogLevel = 'info'): Logger {
  const write = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < order[level]) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, service, msg, ...fields })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** An error as log fields: a bad setting by its message and the settings it names (the operator's fix); anything else with its stack. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof ConfigError) return { code: err.code, error: err.message, settings: err.details };
  return err instanceof Error ? { error: err.message, stack: err.stack } : { error: String(err) };
}

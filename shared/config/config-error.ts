/**
 * Configuration that cannot be used (an environment variable, a secret file): the
 * process cannot start. Not an AppError, which is what API clients see: this one is
 * for the operator, with a stable code and each bad setting named.
 */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly details: ReadonlyArray<{ path: string; message: string }>;

  constructor(message: string, details: ReadonlyArray<{ path: string; message: string }>) {
    super(message);
    this.name = 'ConfigError';
    this.details = details;
  }
}

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

/**
 * Throws a ConfigError naming every one of `names` that `config` leaves unset; `why`
 * ends the message (what needs them). Past it, the compiler knows they are set.
 */
export function requireSettings<C extends object, K extends keyof C & string>(config: C, names: readonly K[], why: string): asserts config is C & { [P in K]-?: NonNullable<C[P]> } {
  const missing = names.filter((name) => config[name] === undefined || config[name] === '');
  if (missing.length === 0) return;
  throw new ConfigError(`${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} required ${why}`, missing.map((path) => ({ path, message: 'required' })));
}

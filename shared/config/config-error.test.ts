import { describe, expect, it } from 'vitest';
import { ConfigError, requireSettings } from './config-error.ts';

describe('requireSettings', () => {
  it('throws a ConfigError (CONFIG_INVALID) naming each unset setting, and nothing when all are set', () => {
    const config: { NATS_URL?: string; CLICKHOUSE_URL?: string; LOG_LEVEL: string } = { CLICKHOUSE_URL: '', LOG_LEVEL: 'info' };
    let thrown: unknown;
    try {
      requireSettings(config, ['NATS_URL', 'CLICKHOUSE_URL'], 'for a standalone ingester');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({
      code: 'CONFIG_INVALID',
      message: 'NATS_URL and CLICKHOUSE_URL are required for a standalone ingester',
      details: [
        { path: 'NATS_URL', message: 'required' },
        { path: 'CLICKHOUSE_URL', message: 'required' },
      ],
    });
    expect(() => requireSettings({ NATS_URL: 'nats://127.0.0.1:4222' }, ['NATS_URL'], 'for a redirector')).not.toThrow();
    expect(() => requireSettings({ NATS_URL: undefined }, ['NATS_URL'], 'for a redirector')).toThrow('NATS_URL is required for a redirector');
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config/config-error.ts';
import { loadAllInOneConfig } from './config.ts';

describe('npm start configuration', () => {
  it('has one admin port, the redirector’s: API_PORT may be the standalone API’s admin default (9092)', () => {
    const config = loadAllInOneConfig({ API_PORT: '9092' });
    expect(config.api.API_PORT).toBe(9092);
    expect(config.redirector.ADMIN_PORT).toBe(9091);
  });

  it('refuses an API_PORT that is its admin port, by default or as set, naming ADMIN_PORT', () => {
    for (const env of [{ API_PORT: '9091' }, { API_PORT: '7000', ADMIN_PORT: '7000' }]) {
      const load = () => loadAllInOneConfig(env);
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(`ADMIN_PORT: must differ from API_PORT (${env.API_PORT})`);
    }
  });

  it('refuses a REDIRECT_PORT that is its admin port, as before', () => {
    expect(() => loadAllInOneConfig({ REDIRECT_PORT: '9091' })).toThrow('must differ from REDIRECT_PORT (9091)');
  });

  it('lets any free port (0) be both', () => {
    const config = loadAllInOneConfig({ API_PORT: '0', REDIRECT_PORT: '0', ADMIN_PORT: '0' });
    expect([config.api.API_PORT, config.redirector.REDIRECT_PORT, config.redirector.ADMIN_PORT]).toEqual([0, 0, 0]);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config/config-error.ts';
import { loadRedirectorConfig } from './config.ts';

describe('loadRedirectorConfig', () => {
  it('has the documented defaults: proxy headers off', () => {
    const config = loadRedirectorConfig({});
    expect(config).toMatchObject({ REDIRECT_PORT: 8080, QR_MARKER_PARAM: 'qr', PASSWORD_ATTEMPTS_PER_MINUTE: 5 });
    expect(config.TRUSTED_IP_HEADER).toBeUndefined();
    expect(config.TRUSTED_COUNTRY_HEADER).toBeUndefined();
    expect(config.LINKROUTE_SECRET).toBeUndefined();
  });

  it('lowercases header names (uWS looks headers up lowercase) and treats empty as unset', () => {
    const config = loadRedirectorConfig({ TRUSTED_IP_HEADER: 'X-Forwarded-For', TRUSTED_COUNTRY_HEADER: '', REDIRECT_PORT: '9090' });
    expect(config.TRUSTED_IP_HEADER).toBe('x-forwarded-for');
    expect(config.TRUSTED_COUNTRY_HEADER).toBeUndefined();
    expect(config.REDIRECT_PORT).toBe(9090);
  });

  it('rejects bad values', () => {
    for (const env of [{ TRUSTED_IP_HEADER: 'x forwarded' }, { QR_MARKER_PARAM: 'q&r' }, { PASSWORD_ATTEMPTS_PER_MINUTE: '0' }, { REDIRECT_PORT: '70000' }]) {
      expect(() => loadRedirectorConfig(env)).toThrow(ConfigError);
    }
  });
});

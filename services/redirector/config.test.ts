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

  it('serves /ready and /metrics on ADMIN_PORT (9091) on loopback by default; 0 is any free port', () => {
    expect(loadRedirectorConfig({})).toMatchObject({ ADMIN_PORT: 9091, ADMIN_HOST: '127.0.0.1' });
    expect(loadRedirectorConfig({ ADMIN_PORT: '0', ADMIN_HOST: '0.0.0.0' })).toMatchObject({ ADMIN_PORT: 0, ADMIN_HOST: '0.0.0.0' });
    expect(loadRedirectorConfig({ ADMIN_PORT: '', ADMIN_HOST: '' })).toMatchObject({ ADMIN_PORT: 9091, ADMIN_HOST: '127.0.0.1' });
    expect(loadRedirectorConfig({ ADMIN_HOST: '::1' }).ADMIN_HOST).toBe('::1');
    expect(() => loadRedirectorConfig({ REDIRECT_PORT: '9091' })).toThrow(/ADMIN_PORT: must differ from REDIRECT_PORT/);
  });

  it('caps a conversion pixel\'s value at PIXEL_MAX_VALUE (1,000,000 by default)', () => {
    expect(loadRedirectorConfig({}).PIXEL_MAX_VALUE).toBe(1_000_000);
    expect(loadRedirectorConfig({ PIXEL_MAX_VALUE: '250.5' }).PIXEL_MAX_VALUE).toBe(250.5);
    for (const bad of ['0', '-5', 'lots', '1e13']) expect(() => loadRedirectorConfig({ PIXEL_MAX_VALUE: bad }), bad).toThrow(/PIXEL_MAX_VALUE/);
  });

  it('rejects bad values', () => {
    for (const env of [{ TRUSTED_IP_HEADER: 'x forwarded' }, { QR_MARKER_PARAM: 'q&r' }, { PASSWORD_ATTEMPTS_PER_MINUTE: '0' }, { REDIRECT_PORT: '70000' }, { ADMIN_PORT: '-1' }, { ADMIN_PORT: 'admin' }, { ADMIN_HOST: 'http://127.0.0.1' }, { ADMIN_HOST: 'a b' }]) {
      expect(() => loadRedirectorConfig(env)).toThrow(ConfigError);
    }
  });
});

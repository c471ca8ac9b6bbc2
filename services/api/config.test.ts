import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config/config-error.ts';
import { loadApiConfig, localShortUrlWarning, withRedirectorPort } from './config.ts';

describe('loadApiConfig: REDIRECT_BASE_URL', () => {
  it('defaults to localhost on REDIRECT_PORT, so shortUrl and QR codes point where the redirector listens', () => {
    expect(loadApiConfig({}).REDIRECT_BASE_URL).toBe('http://localhost:8080');
    expect(loadApiConfig({ REDIRECT_PORT: '8180' }).REDIRECT_BASE_URL).toBe('http://localhost:8180');
    expect(loadApiConfig({ REDIRECT_PORT: '', REDIRECT_BASE_URL: '' }).REDIRECT_BASE_URL).toBe('http://localhost:8080');
  });

  it('takes an explicit REDIRECT_BASE_URL over REDIRECT_PORT, without trailing slashes', () => {
    expect(loadApiConfig({ REDIRECT_PORT: '8180', REDIRECT_BASE_URL: 'https://go.example.com/' }).REDIRECT_BASE_URL).toBe('https://go.example.com');
  });

  it('follows the port a redirector got for REDIRECT_PORT=0 only when the base URL was derived from it', () => {
    expect(withRedirectorPort(loadApiConfig({ REDIRECT_PORT: '0' }), 41234).REDIRECT_BASE_URL).toBe('http://localhost:41234');
    expect(withRedirectorPort(loadApiConfig({ REDIRECT_PORT: '8180' }), 8180).REDIRECT_BASE_URL).toBe('http://localhost:8180');
    expect(withRedirectorPort(loadApiConfig({ REDIRECT_PORT: '0', REDIRECT_BASE_URL: 'https://go.example.com' }), 41234).REDIRECT_BASE_URL).toBe('https://go.example.com');
  });

  it('warns when the API listens for other machines while short URLs and QR codes name this one', () => {
    const warning = (env: Record<string, string>) => localShortUrlWarning(loadApiConfig(env));
    // npm start's defaults: on loopback, localhost links are right.
    expect(warning({})).toBeNull();
    expect(warning({ HOST: 'localhost' })).toBeNull();
    for (const HOST of ['0.0.0.0', '::', '10.0.0.5', 'api.internal']) {
      expect(warning({ HOST }), HOST).toMatch(/^REDIRECT_BASE_URL is http:\/\/localhost:8080, but the API listens on .*: short URLs and QR codes will open only on this machine/);
      for (const base of ['http://127.0.0.1:8080', 'http://[::1]:8080', 'http://go.localhost']) expect(warning({ HOST, REDIRECT_BASE_URL: base }), base).not.toBeNull();
      expect(warning({ HOST, REDIRECT_BASE_URL: 'https://go.example.com' })).toBeNull();
      expect(warning({ HOST, REDIRECT_BASE_URL: 'http://10.0.0.5:8080' })).toBeNull();
    }
  });

  it('serves /metrics on ADMIN_PORT (9092) on loopback by default; 0 is any free port', () => {
    expect(loadApiConfig({})).toMatchObject({ ADMIN_PORT: 9092, ADMIN_HOST: '127.0.0.1' });
    expect(loadApiConfig({ ADMIN_PORT: '0', ADMIN_HOST: '10.0.0.5' })).toMatchObject({ ADMIN_PORT: 0, ADMIN_HOST: '10.0.0.5' });
    expect(() => loadApiConfig({ API_PORT: '9092' })).toThrow(/ADMIN_PORT: must differ from API_PORT/);
    expect(() => loadApiConfig({ ADMIN_PORT: 'x' })).toThrow(/ADMIN_PORT/);
  });

  it('reads an empty value as unset: its default, never 0 (a domain check grace of 0 would fail every domain missed once)', () => {
    expect(loadApiConfig({ DOMAIN_RECHECK_EVERY_MS: '', DOMAIN_RECHECK_GRACE_MS: '', API_MAX_BODY_BYTES: '', QR_MARKER_PARAM: '' })).toMatchObject({
      DOMAIN_RECHECK_EVERY_MS: 86_400_000,
      DOMAIN_RECHECK_GRACE_MS: 604_800_000,
      API_MAX_BODY_BYTES: 1_048_576,
      QR_MARKER_PARAM: 'qr',
    });
    // An explicit 0 still turns the re-checks off.
    expect(loadApiConfig({ DOMAIN_RECHECK_EVERY_MS: '0' }).DOMAIN_RECHECK_EVERY_MS).toBe(0);
  });

  it('rejects a bad REDIRECT_PORT or base URL', () => {
    for (const env of [{ REDIRECT_PORT: '70000' }, { REDIRECT_BASE_URL: 'ftp://go.example.com' }]) expect(() => loadApiConfig(env)).toThrow(ConfigError);
  });
});

describe('loadApiConfig: NATS_EVENTS_RETENTION_HOURS', () => {
  it('is unset by default or empty (a stream keeps its own), whole hours from 1 to a year when set', () => {
    expect(loadApiConfig({}).NATS_EVENTS_RETENTION_HOURS).toBeUndefined();
    expect(loadApiConfig({ NATS_EVENTS_RETENTION_HOURS: '' }).NATS_EVENTS_RETENTION_HOURS).toBeUndefined();
    expect(loadApiConfig({ NATS_EVENTS_RETENTION_HOURS: '24' }).NATS_EVENTS_RETENTION_HOURS).toBe(24);
    for (const value of ['0', '1.5', '8761', 'week']) expect(() => loadApiConfig({ NATS_EVENTS_RETENTION_HOURS: value }), value).toThrow(/NATS_EVENTS_RETENTION_HOURS/);
  });
});

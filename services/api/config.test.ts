import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config/config-error.ts';
import { loadApiConfig, withRedirectorPort } from './config.ts';

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

  it('serves /metrics on ADMIN_PORT (9092) on loopback by default; 0 is any free port', () => {
    expect(loadApiConfig({})).toMatchObject({ ADMIN_PORT: 9092, ADMIN_HOST: '127.0.0.1' });
    expect(loadApiConfig({ ADMIN_PORT: '0', ADMIN_HOST: '10.0.0.5' })).toMatchObject({ ADMIN_PORT: 0, ADMIN_HOST: '10.0.0.5' });
    expect(() => loadApiConfig({ API_PORT: '9092' })).toThrow(/ADMIN_PORT: must differ from API_PORT/);
    expect(() => loadApiConfig({ ADMIN_PORT: 'x' })).toThrow(/ADMIN_PORT/);
  });

  it('rejects a bad REDIRECT_PORT or base URL', () => {
    for (const env of [{ REDIRECT_PORT: '70000' }, { REDIRECT_BASE_URL: 'ftp://go.example.com' }]) expect(() => loadApiConfig(env)).toThrow(ConfigError);
  });
});

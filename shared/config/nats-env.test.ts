import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { natsConnectOptions } from '../bus/nats-connect-options.ts';
import { ConfigError } from './config-error.ts';
import { parseEnv } from './env.ts';
import { checkNatsFields, natsEnv, parseNatsUrl } from './nats-env.ts';

/** As a service composes it (each service's own schema is checked in tests/nats-config.test.ts). */
const schema = z.object(natsEnv).superRefine(checkNatsFields);
const load = (env: Record<string, string>) => parseEnv(schema, env);

describe('NATS_URL', () => {
  it('takes credentials and tls:// out of the URLs, as nats.js would otherwise keep only host and port', () => {
    expect(parseNatsUrl('nats://127.0.0.1:4222')).toEqual({ servers: ['127.0.0.1:4222'], auth: { kind: 'none' }, tls: false, redacted: 'nats://127.0.0.1:4222' });
    expect(parseNatsUrl('nats://svc:s%40cr%3At@nats.example:4333')).toEqual({
      servers: ['nats.example:4333'],
      auth: { kind: 'user', user: 'svc', pass: 's@cr:t' },
      tls: false,
      redacted: 'nats://***@nats.example:4333',
    });
    expect(parseNatsUrl('tls://s3cr3t-token@nats.example')).toEqual({ servers: ['nats.example:4222'], auth: { kind: 'token', token: 's3cr3t-token' }, tls: true, redacted: 'tls://***@nats.example:4222' });
  });

  it('reads a comma-separated cluster list, with the credentials on any seed', () => {
    expect(parseNatsUrl('nats://u:p@n1:4222, nats://n2:4222 ,nats://u:p@n3:4222')).toEqual({
      servers: ['n1:4222', 'n2:4222', 'n3:4222'],
      auth: { kind: 'user', user: 'u', pass: 'p' },
      tls: false,
      redacted: 'nats://***@n1:4222,nats://n2:4222,nats://***@n3:4222',
    });
    expect(parseNatsUrl('nats://n1,tls://n2').tls).toBe(true);
  });

  it('refuses what it cannot use, without repeating the credentials', () => {
    for (const bad of ['http://n1:4222', 'n1:4222', 'nats://u:p@n1,nats://u:q@n2', 'nats://:p@n1', 'nats://n1/path', 'nats://u:%zz@n1', ',']) {
      expect(() => parseNatsUrl(bad), bad).toThrow();
      try {
        load({ NATS_URL: bad });
        expect.unreachable(bad);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as Error).message).not.toMatch(/:q@|%zz/);
      }
    }
  });

  it('refuses a creds file beside credentials in the URL, and settings without NATS_URL', () => {
    expect(() => load({ NATS_URL: 'nats://u:p@n1', NATS_CREDS: '/x.creds' })).toThrow(/NATS_CREDS: cannot be combined/);
    expect(() => load({ NATS_URL: 'nats://tok@n1', NATS_CREDS: '/x.creds' })).toThrow(/NATS_CREDS: cannot be combined/);
    expect(() => load({ NATS_TLS_CA: '/ca.pem' })).toThrow(/NATS_TLS_CA: needs NATS_URL/);
    expect(() => load({ NATS_CREDS: '/x.creds' })).toThrow(/NATS_CREDS: needs NATS_URL/);
    expect(load({ NATS_URL: '', NATS_CREDS: '' })).toEqual({});
  });

  it('becomes nats.js options: user and password, token, required and verified TLS', async () => {
    expect(await natsConnectOptions('nats://u:p@n1:4222')).toEqual({ servers: ['n1:4222'], user: 'u', pass: 'p' });
    expect(await natsConnectOptions('nats://tok@n1:4222')).toEqual({ servers: ['n1:4222'], token: 'tok' });
    expect(await natsConnectOptions('tls://n1:4222')).toEqual({ servers: ['n1:4222'], tls: {} });
    await expect(natsConnectOptions({ ...parseNatsUrl('nats://n1'), credsFile: '/nonexistent/linkroute.creds' })).rejects.toThrow(/ENOENT/);
  });
});

import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../services/api/config.ts';
import { loadIngesterConfig } from '../services/ingester/config.ts';
import { loadRedirectorConfig } from '../services/redirector/config.ts';
import { loadWebhooksConfig } from '../services/webhooks/config.ts';
import { natsTarget } from '../shared/config/nats-env.ts';

/** Every service that connects to NATS (the CLI does not) reads the same three variables the same way. */
const loaders = { api: loadApiConfig, redirector: loadRedirectorConfig, ingester: loadIngesterConfig, webhooks: loadWebhooksConfig };

describe('NATS settings of every service', () => {
  it('parse NATS_URL, NATS_CREDS and NATS_TLS_CA into one connection target', () => {
    for (const [name, load] of Object.entries(loaders)) {
      const config = load({ NATS_URL: 'tls://n1:4222,tls://n2:4222', NATS_CREDS: '/run/secrets/linkroute.creds', NATS_TLS_CA: '/etc/nats/ca.pem' });
      expect(natsTarget(config), name).toEqual({
        servers: ['n1:4222', 'n2:4222'],
        auth: { kind: 'none' },
        tls: true,
        redacted: 'tls://n1:4222,tls://n2:4222',
        credsFile: '/run/secrets/linkroute.creds',
        tlsCaFile: '/etc/nats/ca.pem',
      });
      expect(natsTarget(load({ NATS_URL: 'nats://svc:pw@n1' })), name).toMatchObject({ auth: { kind: 'user', user: 'svc', pass: 'pw' }, tls: false });
      expect(natsTarget(load({})), name).toBeUndefined();
      expect(() => load({ NATS_URL: 'nats://u:p@n1', NATS_CREDS: '/x.creds' }), name).toThrow(/NATS_CREDS/);
      expect(() => load({ NATS_TLS_CA: '/ca.pem' }), name).toThrow(/NATS_TLS_CA: needs NATS_URL/);
      expect(() => load({ NATS_URL: 'http://n1' }), name).toThrow(/NATS_URL/);
    }
  });
});

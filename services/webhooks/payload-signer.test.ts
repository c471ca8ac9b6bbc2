import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { payloadSigner } from './payload-signer.ts';

describe('payload signer', () => {
  it('signs byte for byte as the standardwebhooks package does, and its signatures verify there', () => {
    const bodies = ['', '{"type":"link.created"}', 'x'.repeat(5_000), '{"name":"Zoë 🚀 \u00e9\u4e2d"}', 'lone \ud800 surrogate'];
    for (let i = 0; i < 50; i++) {
      const secret = newSigningSecret();
      const ours = payloadSigner(secret);
      const theirs = new Webhook(secret);
      const id = `evt_${randomBytes(8).toString('hex')}`;
      const at = new Date(1_700_000_000_000 + i * 999_937);
      const body = bodies[i % bodies.length]! + randomBytes(i).toString('hex');
      const signature = ours.sign(id, at, body);
      expect(signature).toBe(theirs.sign(id, at, body));
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': ours.sign(id, new Date(), body) };
      expect(() => theirs.verify(body, headers, { jsonParse: false })).not.toThrow();
    }
  });

  it('refuses a secret the package refuses', () => {
    expect(() => payloadSigner('whsec_')).toThrow();
    expect(() => new Webhook('whsec_')).toThrow();
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { looksSealed, sealedBox, SealedValueError } from './sealed-box.ts';
import { openSigningSecret, sealSigningSecret } from './webhooks/signing-secret.ts';

describe('sealed box', () => {
  const master = randomBytes(32);

  it('opens what it sealed; every seal differs (random IV); the text shows nothing of the plaintext', () => {
    const box = sealedBox(master, 'test purpose');
    const plaintext = '{"secret":"whsec_abcdefghijklmnopqrstuvwxyz"}';
    const [a, b] = [box.seal(plaintext), box.seal(plaintext)];
    expect(a).not.toBe(b);
    expect(looksSealed(a)).toBe(true);
    expect(a).not.toContain('whsec_');
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(box.open(a)).toBe(plaintext);
    expect(box.open(box.seal(''))).toBe('');
  });

  it('refuses a value sealed for another purpose, under another secret, altered, or not sealed at all', () => {
    const sealed = sealedBox(master, 'one').seal('hello');
    expect(() => sealedBox(master, 'two').open(sealed)).toThrow(SealedValueError);
    expect(() => sealedBox(randomBytes(32), 'one').open(sealed)).toThrow(SealedValueError);
    const altered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => sealedBox(master, 'one').open(altered)).toThrow(SealedValueError);
    expect(() => sealedBox(master, 'one').open('{"a":1}')).toThrow(SealedValueError);
    expect(() => sealedBox(master, 'one').open('v1.AAAA.AA')).toThrow(SealedValueError);
    expect(looksSealed('{"a":1}')).toBe(false);
  });

  it('opens webhook signing secrets sealed before the box was shared (a vector from the former code)', () => {
    const former = Buffer.from(`${'a'.repeat(32)}linkroute test vector`, 'utf8');
    const vector = 'v1.Bsky4ehw1sGIZu0i.s2IpG5dJNHhvq1sh_5G6EvEGcRF9OA8L7fblbIpRh1kutrtuxj9oZ_CAkMSqGtgmSpVQchp1QAU5OsejV3rdhpghNJoZIA';
    expect(openSigningSecret(former, vector)).toBe('whsec_dGVzdCB2ZWN0b3Igc2VjcmV0IGZvciBzZWFsZWQgYm94IQ==');
    expect(openSigningSecret(master, sealSigningSecret(master, 'whsec_x'))).toBe('whsec_x');
  });
});

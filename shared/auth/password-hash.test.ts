import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './password-hash.ts';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-key.ts';

describe('password hashing', () => {
  it('verifies the right password only, salted per hash', async () => {
    const a = await hashPassword('correct horse');
    const b = await hashPassword('correct horse');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('correct horse', a)).toBe(true);
    expect(await verifyPassword('correct horsE', a)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });
});

describe('api keys', () => {
  it('are lr_live_ keys whose hash is stable and whose prefix is short', () => {
    const k = generateApiKey();
    expect(k.key).toMatch(/^lr_live_[A-Za-z0-9]{32}$/);
    expect(looksLikeApiKey(k.key)).toBe(true);
    expect(looksLikeApiKey('lr_test_abc')).toBe(false);
    expect(hashApiKey(k.key)).toBe(k.hash);
    expect(k.key.startsWith(k.prefix)).toBe(true);
    expect(k.prefix).toHaveLength(14);
  });
});

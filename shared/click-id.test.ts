import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClickIdIssuer, createClickId, verifyClickId } from './click-id.ts';
import { newId } from './ids.ts';

const secret = randomBytes(32);
const linkId = newId('link');
const NOW = Date.parse('2026-03-04T12:00:00.123Z');

/** Re-encodes a click id after changing its binary form. */
function mutate(clickId: string, change: (bytes: Buffer) => void): string {
  const bytes = Buffer.from(clickId.slice(3), 'base64url');
  change(bytes);
  return `ck_${bytes.toString('base64url')}`;
}

describe('click ids', () => {
  it('round-trips link id and time', () => {
    const clickId = createClickId(secret, linkId, NOW);
    expect(clickId).toMatch(/^ck_[A-Za-z0-9_-]{63}$/);
    expect(verifyClickId(secret, clickId)).toEqual({ linkId, timestamp: NOW });
  });

  it('keeps the whole 48-bit time range', () => {
    for (const now of [0, 1, 2 ** 48 - 1]) {
      expect(verifyClickId(secret, createClickId(secret, linkId, now))?.timestamp).toBe(now);
    }
  });

  it('rejects a change to any byte, and any single character', () => {
    const clickId = createClickId(secret, linkId, NOW);
    for (let i = 0; i < 47; i++) {
      for (const bit of [0x01, 0x80]) {
        expect(verifyClickId(secret, mutate(clickId, (bytes) => void (bytes[i] = bytes[i]! ^ bit))), `byte ${i}`).toBeNull();
      }
    }
    for (let i = 0; i < clickId.length; i++) {
      const replacement = clickId[i] === 'A' ? 'B' : 'A';
      expect(verifyClickId(secret, clickId.slice(0, i) + replacement + clickId.slice(i + 1)), `char ${i}`).toBeNull();
    }
  });

  it('rejects another secret', () => {
    expect(verifyClickId(randomBytes(32), createClickId(secret, linkId, NOW))).toBeNull();
  });

  it('rejects a non-canonical spelling of valid bytes', () => {
    const clickId = createClickId(secret, linkId, NOW);
    const last = clickId.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) | 1]!; // same top 4 bits, a low bit set
    expect(Buffer.from(clickId.slice(0, -1) + sibling, 'base64url').equals(Buffer.from(clickId, 'base64url'))).toBe(true);
    expect(verifyClickId(secret, clickId.slice(0, -1) + sibling)).toBeNull();
  });

  it('returns null for garbage, short, long and non-string input', () => {
    const clickId = createClickId(secret, linkId, NOW);
    const bad: unknown[] = [
      '',
      'ck_',
      'ck_abc',
      clickId.slice(0, -1),
      `${clickId}A`,
      `${clickId.slice(0, -4)}====`,
      `ck_${'!'.repeat(63)}`,
      `ck_${' '.repeat(63)}`,
      `xx_${clickId.slice(3)}`,
      clickId.replace('ck_', 'CK_'),
      `ck_${'é'.repeat(63)}`,
      'x'.repeat(100_000),
      null,
      undefined,
      42,
    ];
    for (const value of bad) expect(verifyClickId(secret, value as string)).toBeNull();
  });

  it('rejects an unknown version even with a valid MAC layout', () => {
    const clickId = createClickId(secret, linkId, NOW);
    expect(verifyClickId(secret, mutate(clickId, (bytes) => void (bytes[0] = 2)))).toBeNull();
  });

  it('is unique over 100k ids of one link in the same millisecond', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 100_000; i++) ids.add(createClickId(secret, linkId, NOW));
    expect(ids.size).toBe(100_000);
  });

  it('refuses link ids newId could not have produced', () => {
    expect(() => createClickId(secret, 'link_1', NOW)).toThrow(TypeError);
    expect(() => createClickId(secret, `rule_${linkId.slice(5)}`, NOW)).toThrow(TypeError);
    expect(() => createClickId(secret, `link_${'é'.repeat(22)}`, NOW)).toThrow(TypeError);
    expect(() => createClickId(secret, linkId, -1)).toThrow(TypeError);
    expect(() => createClickId(secret, linkId, 1.5)).toThrow(TypeError);
  });

  it('works with several secrets side by side', () => {
    const other = randomBytes(32);
    const a = createClickId(secret, linkId, NOW);
    const b = createClickId(other, linkId, NOW);
    expect(verifyClickId(secret, a)).not.toBeNull();
    expect(verifyClickId(other, b)).not.toBeNull();
    expect(verifyClickId(other, a)).toBeNull();
  });
});

describe('ClickIdIssuer', () => {
  it('issues click ids that verify under its secret, each new although its buffer is reused', () => {
    const secret = randomBytes(32);
    const issuer = new ClickIdIssuer(secret);
    const links = [newId('link'), newId('link')];
    const now = Date.UTC(2030, 5, 1);
    const ids = Array.from({ length: 200 }, (_, i) => issuer.issue(links[i % 2]!, now + i));
    expect(new Set(ids).size).toBe(200);
    ids.forEach((id, i) => expect(verifyClickId(secret, id)).toEqual({ linkId: links[i % 2], timestamp: now + i }));
    expect(verifyClickId(randomBytes(32), ids[0]!)).toBeNull();
    expect(createClickId(secret, links[0]!, now).length).toBe(ids[0]!.length);
  });

  it('refuses what newId could not have made, as createClickId does', () => {
    const issuer = new ClickIdIssuer(randomBytes(32));
    expect(() => issuer.issue('link_short', 0)).toThrow(TypeError);
    expect(() => issuer.issue(newId('link'), -1)).toThrow(TypeError);
  });
});

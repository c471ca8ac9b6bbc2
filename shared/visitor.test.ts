import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { mulberry32 } from './testing/seeded-random.ts';
import { hashedVisitorId, hashedVisitorIdFromDigest, userAgentDigest, VisitorHasher, visitorCookie, visitorFromCookie, visitorFromCookieHeader } from './visitor.ts';

const secret = randomBytes(32);
const UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const NOON = Date.parse('2026-03-04T12:00:00Z');

describe('hashedVisitorId', () => {
  it('is 22 base64url characters and matches the documented construction', () => {
    const id = hashedVisitorId(secret, '81.2.69.142', UA, NOON);
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const dayKey = createHmac('sha256', secret).update('linkroute:visitor-day:2026-03-04').digest();
    const uaDigest = createHash('sha256').update(UA).digest();
    const expected = createHmac('sha256', dayKey).update(Buffer.concat([Buffer.from('81.2.69.142'), Buffer.from([0]), uaDigest])).digest();
    expect(id).toBe(expected.subarray(0, 16).toString('base64url'));
  });

  it('is stable within a UTC day and for every holder of the secret', () => {
    const a = hashedVisitorId(secret, '81.2.69.142', UA, Date.parse('2026-03-04T00:00:00Z'));
    const b = hashedVisitorId(Buffer.from(secret), '81.2.69.142', UA, Date.parse('2026-03-04T23:59:59.999Z'));
    expect(b).toBe(a);
  });

  it('changes with the day, the IP, the user agent and the secret', () => {
    const base = hashedVisitorId(secret, '81.2.69.142', UA, NOON);
    expect(hashedVisitorId(secret, '81.2.69.142', UA, NOON + 86_400_000)).not.toBe(base);
    expect(hashedVisitorId(secret, '81.2.69.143', UA, NOON)).not.toBe(base);
    expect(hashedVisitorId(secret, '81.2.69.142', `${UA} x`, NOON)).not.toBe(base);
    expect(hashedVisitorId(randomBytes(32), '81.2.69.142', UA, NOON)).not.toBe(base);
  });

  it('uses only the first 512 characters of the user agent, like the UA parser', () => {
    const long = 'x'.repeat(512);
    expect(hashedVisitorId(secret, '1.2.3.4', `${long}a`, NOON)).toBe(hashedVisitorId(secret, '1.2.3.4', `${long}b`, NOON));
  });

  it('keeps (ip, ua) pairs apart at the boundary', () => {
    expect(hashedVisitorId(secret, '1.2.3.4', '5 UA', NOON)).not.toBe(hashedVisitorId(secret, '1.2.3.45', ' UA', NOON));
  });

  it('never contains the IP, and copes with empty, non-ASCII and huge input', () => {
    const id = hashedVisitorId(secret, '81.2.69.142', UA, NOON);
    expect(id).not.toContain('81.2.69.142');
    for (const [ip, ua] of [
      ['', ''],
      ['2001:db8::1', 'Mozilla/5.0 ☃ 😀'],
      ['x'.repeat(10_000), 'y'.repeat(100_000)],
      ['\u{1F600}'.repeat(100), '\u{1F600}'.repeat(1000)],
    ] as const) {
      expect(hashedVisitorId(secret, ip, ua, NOON)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    }
  });
});

describe('hashedVisitorIdFromDigest', () => {
  it('is hashedVisitorId with the User-Agent given as userAgentDigest', () => {
    expect(userAgentDigest(UA)).toEqual(createHash('sha256').update(UA).digest());
    const long = `${'x'.repeat(512)}tail`;
    expect(userAgentDigest(long)).toEqual(userAgentDigest('x'.repeat(512)));
    for (const [ip, ua] of [
      ['81.2.69.142', UA],
      ['2001:db8::1', UA],
      ['', ''],
      ['caf\u00e9 \u{1F600}', 'Mozilla/5.0 \u2603'],
      ['1.2.3.4\u0080', long],
      ['x'.repeat(10_000), 'y'],
    ] as const) {
      expect(hashedVisitorIdFromDigest(secret, ip, userAgentDigest(ua), NOON)).toBe(hashedVisitorId(secret, ip, ua, NOON));
    }
  });

  it('hashes non-ASCII addresses as UTF-8, as the documented construction says', () => {
    const dayKey = createHmac('sha256', secret).update('linkroute:visitor-day:2026-03-04').digest();
    for (const ip of ['caf\u00e9', '1.2.3.4\u0080', 'a\u{1F600}b']) {
      const expected = createHmac('sha256', dayKey)
        .update(Buffer.concat([Buffer.from(ip, 'utf8'), Buffer.from([0]), createHash('sha256').update(UA).digest()]))
        .digest();
      expect(hashedVisitorIdFromDigest(secret, ip, userAgentDigest(UA), NOON)).toBe(expected.subarray(0, 16).toString('base64url'));
    }
  });

  it('refuses a digest of the wrong length', () => {
    expect(() => hashedVisitorIdFromDigest(secret, '1.2.3.4', Buffer.alloc(31), NOON)).toThrow(TypeError);
  });
});

describe('visitor cookie', () => {
  it('accepts exactly 22 base64url characters', () => {
    const id = hashedVisitorId(secret, '81.2.69.142', UA, NOON);
    expect(visitorFromCookie(id)).toBe(id);
    for (const bad of ['', 'short', `${id}A`, id.slice(0, 21), `${id.slice(0, 21)}=`, `${id.slice(0, 21)}+`, `${id.slice(0, 21)}é`, null, undefined]) {
      expect(visitorFromCookie(bad)).toBeNull();
    }
  });

  it('finds lr_vid in a Cookie header among others, and only as a whole name', () => {
    const id = 'AbCdEfGhIjKlMnOpQrStUv';
    expect(visitorFromCookieHeader(`lr_vid=${id}`)).toBe(id);
    expect(visitorFromCookieHeader(`a=1; lr_vid=${id}; b=2`)).toBe(id);
    expect(visitorFromCookieHeader(`a=1;lr_vid=${id}`)).toBe(id);
    expect(visitorFromCookieHeader(`xlr_vid=${id}`)).toBeNull();
    expect(visitorFromCookieHeader(`xlr_vid=${id}; lr_vid=${id.replace('A', 'Z')}`)).toBe(id.replace('A', 'Z'));
    expect(visitorFromCookieHeader(`lr_vid=bad; lr_vid=${id}`)).toBe(id);
    expect(visitorFromCookieHeader('lr_vid=')).toBeNull();
    expect(visitorFromCookieHeader('')).toBeNull();
  });

  it('reads a header in time linear in its length, whatever it holds: a public visitor sends it', () => {
    // Characters the scan reads: every `;` search's span and every character looked at.
    const readBy = (header: string) => {
      let read = 0;
      const indexOf = String.prototype.indexOf;
      const charCodeAt = String.prototype.charCodeAt;
      const searches = vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, position?: number) {
        const found = indexOf.call(this, search, position);
        if (this === header) read += (found === -1 ? this.length : found) - (position ?? 0);
        return found;
      });
      const looks = vi.spyOn(String.prototype, 'charCodeAt').mockImplementation(function (this: string, index: number) {
        if (this === header) read++;
        return charCodeAt.call(this, index);
      });
      try {
        visitorFromCookieHeader(header);
      } finally {
        searches.mockRestore();
        looks.mockRestore();
      }
      return read;
    };
    // A review's crafted Cookie (15,000 ` lr_vid=`, no `;`: 31 ms of CPU), and with trailing blanks.
    for (const header of [' lr_vid='.repeat(15_000), ' lr_vid='.repeat(7_500) + ' '.repeat(60_000), `${'a=1; '.repeat(10_000)}lr_vid=x`]) {
      expect(readBy(header), header.slice(0, 40)).toBeLessThanOrEqual(3 * header.length);
    }
  });

  it('finds what a scan of each match to its own `;` finds, over random headers', () => {
    const id = 'AbCdEfGhIjKlMnOpQrStUv';
    // The scan as it was, each match searching its own `;` (quadratic on crafted headers).
    const reference = (header: string): string | null => {
      let from = 0;
      for (;;) {
        const at = header.indexOf('lr_vid=', from);
        if (at === -1) return null;
        const before = at === 0 ? 32 : header.charCodeAt(at - 1);
        if (before === 32 || before === 59 || before === 9) {
          const start = at + 7;
          let end = header.indexOf(';', start);
          if (end === -1) end = header.length;
          while (end > start && (header.charCodeAt(end - 1) === 32 || header.charCodeAt(end - 1) === 9)) end--;
          const found = visitorFromCookie(header.slice(start, end));
          if (found !== null) return found;
        }
        from = at + 7;
      }
    };
    const random = mulberry32(7);
    const parts = [' lr_vid=', 'lr_vid=', ';', ' ', '\t', 'x', id, id.replace('A', 'Z'), 'a=1', '; lr_vid=', 'xlr_vid='];
    for (let i = 0; i < 20_000; i++) {
      const header = Array.from({ length: 1 + Math.floor(random() * 12) }, () => parts[Math.floor(random() * parts.length)]).join('');
      expect(visitorFromCookieHeader(header), JSON.stringify(header)).toBe(reference(header));
    }
  });

  it('is issued for a year, first-party, not readable by scripts', () => {
    expect(visitorCookie('AbCdEfGhIjKlMnOpQrStUv')).toBe('lr_vid=AbCdEfGhIjKlMnOpQrStUv; Max-Age=31536000; Path=/; HttpOnly; SameSite=Lax');
  });
});

describe('VisitorHasher', () => {
  it('gives the ids hashedVisitorIdFromDigest gives, across UTC days and for non-ASCII input, with its buffer reused', () => {
    const secret = randomBytes(32);
    const hasher = new VisitorHasher(secret);
    const digest = userAgentDigest('Mozilla/5.0 (X11; Linux x86_64)');
    const day = 86_400_000;
    const start = Date.UTC(2030, 0, 1, 23, 59);
    const cases: Array<[string, number]> = [
      ['81.2.69.142', start],
      ['2001:db8::1', start + 60_000],
      ['81.2.69.142', start + 2 * 60_000],
      ['ünïcode', start + day],
      ['81.2.69.142', start + 3 * day],
      ['1.2.3.4', start],
    ];
    for (const [ip, now] of cases) expect(hasher.hash(ip, digest, now)).toBe(hashedVisitorIdFromDigest(secret, ip, digest, now));
    expect(hasher.hash('81.2.69.142', digest, start)).not.toBe(hasher.hash('81.2.69.142', digest, start + day));
  });

  it('refuses what is not a User-Agent digest', () => {
    expect(() => new VisitorHasher(randomBytes(32)).hash('1.2.3.4', new Uint8Array(31), 0)).toThrow(TypeError);
  });
});

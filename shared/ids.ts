import { randomBytesInto } from './random-pool.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Bytes drawn from the pool at a time (it hands out at most its size at once). */
const DRAW = 256;

/**
 * Uniform base62 string: rejection sampling keeps every character equally likely.
 * The bytes come from the shared random pool (crypto.randomFillSync, each byte handed
 * out once), not a randomBytes() call each: a bulk create draws two per link (id and
 * short code), and randomBytes' fixed cost per call made them 18 ms of 1,000 links'
 * API CPU in issue 18's profile (~9 µs a call on the busy 2-core machine).
 */
export function randomBase62(length: number): string {
  let out = '';
  const bytes = new Uint8Array(Math.min(DRAW, length * 2));
  while (out.length < length) {
    randomBytesInto(bytes, 0, bytes.length);
    for (const byte of bytes) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const idPrefixes = {
  workspace: 'ws',
  apiKey: 'key',
  campaign: 'campaign',
  link: 'link',
  rule: 'rule',
  domain: 'domain',
  qr: 'qr',
  conversion: 'conv',
  webhook: 'wh',
  webhookEvent: 'evt',
  webhookDelivery: 'dlv',
} as const;

export type IdKind = keyof typeof idPrefixes;

/**
 * `<prefix>_<time><random>`: the 8-character base62 millisecond time makes ids
 * roughly creation-ordered (helpful in logs and indexes); 14 random characters
 * (~83 bits) make collisions irrelevant without a lookup.
 */
export function newId(kind: IdKind, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 8; i++) {
    time = BASE62[t % 62] + time;
    t = Math.floor(t / 62);
  }
  return `${idPrefixes[kind]}_${time}${randomBase62(14)}`;
}

export function hasPrefix(value: string, kind: IdKind): boolean {
  return value.startsWith(`${idPrefixes[kind]}_`);
}

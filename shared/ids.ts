import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string: rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
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

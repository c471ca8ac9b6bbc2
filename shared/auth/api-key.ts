import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids.ts';

export const API_KEY_PREFIX = 'lr_live_';
/** How much of a key is stored in clear so a person can tell keys apart. */
const SHOWN_LENGTH = API_KEY_PREFIX.length + 6;

export interface GeneratedApiKey {
  key: string;
  hash: string;
  prefix: string;
}

/** 32 base62 characters: ~190 bits, so SHA-256 without salt or stretching is safe. */
export function generateApiKey(): GeneratedApiKey {
  const key = API_KEY_PREFIX + randomBase62(32);
  return { key, hash: hashApiKey(key), prefix: key.slice(0, SHOWN_LENGTH) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && /^[A-Za-z0-9_]{20,100}$/.test(value);
}

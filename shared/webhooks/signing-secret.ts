import { randomBytes } from 'node:crypto';
import { sealedBox } from '../sealed-box.ts';

/**
 * Webhook signing secrets. Senders need the secret itself to sign, so it is stored
 * sealed (shared/sealed-box.ts, AES-256-GCM) under a key derived from
 * LINKROUTE_SECRET, which the API and the webhooks service share: a database dump
 * alone signs nothing.
 */
const SECRET_BYTES = 32;
/** The sealing purpose; changing it would orphan every stored secret. */
const PURPOSE = 'linkroute webhook signing secrets v1';

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** `v1.<iv>.<ciphertext+tag>`, base64url. */
export function sealSigningSecret(masterSecret: Buffer, secret: string): string {
  return sealedBox(masterSecret, PURPOSE).seal(secret);
}

/** Throws when the value was sealed under another LINKROUTE_SECRET or altered. */
export function openSigningSecret(masterSecret: Buffer, sealed: string): string {
  return sealedBox(masterSecret, PURPOSE).open(sealed);
}

import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets. Senders need the secret itself to sign, so it is stored
 * encrypted (AES-256-GCM) under a key derived from LINKROUTE_SECRET, which the API
 * and the webhooks service share: a database dump alone signs nothing.
 */
const SECRET_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

function keyOf(masterSecret: Buffer): Buffer {
  return createHmac('sha256', masterSecret).update('linkroute webhook signing secrets v1').digest();
}

/** `v1.<iv>.<ciphertext+tag>`, base64url. */
export function sealSigningSecret(masterSecret: Buffer, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(masterSecret), iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** Throws when the value was sealed under another LINKROUTE_SECRET or altered. */
export function openSigningSecret(masterSecret: Buffer, sealed: string): string {
  const [version, iv, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !body) throw new Error('not a sealed webhook secret');
  const bytes = Buffer.from(body, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(masterSecret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}

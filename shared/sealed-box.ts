import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Authenticated encryption (AES-256-GCM) of values kept at rest in Postgres under a
 * key derived from LINKROUTE_SECRET, which every service shares: a database dump
 * alone reads none of them. Each use names its purpose, which derives its own key,
 * so a value sealed for one use never opens as another.
 *
 * Format: `v1.<iv>.<ciphertext+tag>`, base64url (no `{` or `"`, so a sealed value is
 * never mistaken for JSON text).
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'v1.';

export interface SealedBox {
  seal(plaintext: string): string;
  /** Throws SealedValueError when the value was sealed under another secret or purpose, or altered. */
  open(sealed: string): string;
}

/** A value that does not open: another LINKROUTE_SECRET, another purpose, or altered. */
export class SealedValueError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SealedValueError';
  }
}

export const looksSealed = (value: string): boolean => value.startsWith(PREFIX);

export function sealedBox(masterSecret: Buffer, purpose: string): SealedBox {
  const key = createHmac('sha256', masterSecret).update(purpose).digest();
  return {
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${iv.toString('base64url')}.${sealed.toString('base64url')}`;
    },
    open(sealed) {
      const [version, iv, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !body) throw new SealedValueError('not a sealed value');
      const bytes = Buffer.from(body, 'base64url');
      if (bytes.length < TAG_BYTES) throw new SealedValueError('sealed value too short');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch (err) {
        // GCM's authentication failure (or a malformed IV): the one condition here.
        throw new SealedValueError('sealed value does not open under this secret and purpose', { cause: err });
      }
    },
  };
}

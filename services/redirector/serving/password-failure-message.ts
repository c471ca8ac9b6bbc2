/**
 * The message one redirector sends the others for a wrong link password: who sent it and
 * the keys it charged (password-limits.ts), as JSON,
 * `{"from":"<instance id>","keys":["<visitor>\n<link>","<address>\n<link>","<address>"]}`.
 * No time: a receiver charges the keys at its own time of arrival, so hosts' clocks need
 * not agree. Fields it does not know are ignored (a newer sender may add some).
 *
 * Bounded: a message is at most MAX_PASSWORD_FAILURE_BYTES, each key at most MAX_KEY_LENGTH
 * characters (real keys are about 50 to 70 ASCII characters), so a throttle fed from the
 * bus holds no more per key than one fed by requests.
 */
import { z } from 'zod';
import type { PasswordLimitKeys } from './password-limits.ts';

export const MAX_PASSWORD_FAILURE_BYTES = 1024;
const MAX_KEY_LENGTH = 256;
const MAX_INSTANCE_ID_LENGTH = 64;

export interface PasswordFailure {
  /** The instance id of the redirector that checked the guess. */
  from: string;
  keys: PasswordLimitKeys;
}

const key = z.string().min(1).max(MAX_KEY_LENGTH);
const messageSchema = z.object({
  from: z.string().min(1).max(MAX_INSTANCE_ID_LENGTH),
  keys: z.tuple([key, key, key]),
});

export type DecodedPasswordFailure = { failure: PasswordFailure } | { malformed: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The message for `failure`; null when it would break the bounds (no real key does). */
export function encodePasswordFailure(failure: PasswordFailure): Uint8Array | null {
  const { from, keys } = failure;
  const parsed = messageSchema.safeParse({ from, keys: [keys.visitorAndLink, keys.addressAndLink, keys.address] });
  if (!parsed.success) return null;
  const data = encoder.encode(JSON.stringify(parsed.data));
  return data.byteLength <= MAX_PASSWORD_FAILURE_BYTES ? data : null;
}

/** The failure `data` holds, or why it holds none: no input makes it throw. */
export function decodePasswordFailure(data: Uint8Array): DecodedPasswordFailure {
  if (data.byteLength > MAX_PASSWORD_FAILURE_BYTES) return { malformed: `larger than ${MAX_PASSWORD_FAILURE_BYTES} bytes` };
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(data));
  } catch (err) {
    // decode() throws TypeError on bytes that are not UTF-8, JSON.parse SyntaxError on text that is not JSON.
    if (err instanceof TypeError || err instanceof SyntaxError) return { malformed: 'not JSON' };
    throw err;
  }
  const parsed = messageSchema.safeParse(json);
  if (!parsed.success) return { malformed: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'message'}: ${issue.message}`).join('; ') };
  const [visitorAndLink, addressAndLink, address] = parsed.data.keys;
  return { failure: { from: parsed.data.from, keys: { visitorAndLink, addressAndLink, address } } };
}

/**
 * Click ids `ck_<base64url>`: the event id of a click, appended to destinations for
 * conversion tracking, and verifiable without any lookup (DESIGN "Click ids").
 *
 * Binary layout (47 bytes, 63 base64url characters):
 *   [0]       version, 1
 *   [1..7)    click time, epoch ms, 48-bit big-endian
 *   [7..13)   random, 48 bits: ids of one link in one millisecond stay distinct
 *   [13..35)  the link id's 22 characters after `link_`, ASCII
 *   [35..47)  HMAC-SHA256(secret, bytes [0..35)), first 12 bytes
 *
 * Creating one is on the redirect hot path: the HMAC key's midstates are computed once
 * per secret (see hmac-sha256.ts), random bytes come from a pool (random-pool.ts), and
 * the redirector holds a ClickIdIssuer, whose key state and buffer are its own.
 */
import { HmacSha256 } from './hmac-sha256.ts';
import { randomBytesInto } from './random-pool.ts';

const VERSION = 1;
const TIME_AT = 1;
const RANDOM_AT = 7;
const LINK_AT = 13;
const LINK_SUFFIX_LENGTH = 22;
const MAC_AT = LINK_AT + LINK_SUFFIX_LENGTH;
const MAC_LENGTH = 12;
const BINARY_LENGTH = MAC_AT + MAC_LENGTH;
const PREFIX = 'ck_';
const LINK_PREFIX = 'link_';
/** 47 bytes = 376 bits -> 63 characters; the last one carries 4 bits and 2 zero bits. */
const ENCODED_LENGTH = Math.ceil((BINARY_LENGTH * 8) / 6);
const CLICK_ID_LENGTH = PREFIX.length + ENCODED_LENGTH;

/** The MAC state per secret. Callers pass the same Buffer every time and never mutate it. */
const macs = new WeakMap<Buffer, HmacSha256>();

function macFor(secret: Buffer): HmacSha256 {
  let mac = macs.get(secret);
  if (mac === undefined) {
    mac = new HmacSha256(secret);
    macs.set(secret, mac);
  }
  return mac;
}

/** [0-9A-Za-z]: what newId('link') generates after `link_`. */
function isBase62(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/**
 * A new click id for a click on `linkId` at `now` (epoch ms). Throws a TypeError for a
 * link id that newId('link') could not have produced: that is a programming error.
 */
export function createClickId(secret: Buffer, linkId: string, now: number): string {
  return writeClickId(macFor(secret), Buffer.allocUnsafe(BINARY_LENGTH), linkId, now);
}

/**
 * createClickId for a server that issues many with one secret (the redirector): the
 * key's MAC state and a scratch buffer are its own, so an id costs no key lookup and no
 * allocation but its string (see VisitorHasher in visitor.ts for what the pair saves).
 * One per server instance; calls run one at a time, as JavaScript does.
 */
export class ClickIdIssuer {
  readonly #mac: HmacSha256;
  readonly #scratch = Buffer.alloc(BINARY_LENGTH);

  constructor(secret: Buffer) {
    this.#mac = new HmacSha256(secret);
  }

  issue(linkId: string, now: number): string {
    return writeClickId(this.#mac, this.#scratch, linkId, now);
  }
}

/** A click id written through `buf` (BINARY_LENGTH bytes). */
function writeClickId(mac: HmacSha256, buf: Buffer, linkId: string, now: number): string {
  if (linkId.length !== LINK_PREFIX.length + LINK_SUFFIX_LENGTH || !linkId.startsWith(LINK_PREFIX)) {
    throw new TypeError(`not a link id: ${linkId}`);
  }
  if (!Number.isInteger(now) || now < 0 || now >= 2 ** 48) throw new TypeError(`not a click time: ${now}`);
  buf[0] = VERSION;
  buf.writeUIntBE(now, TIME_AT, 6);
  randomBytesInto(buf, RANDOM_AT, RANDOM_AT + 6);
  for (let i = 0; i < LINK_SUFFIX_LENGTH; i++) {
    const code = linkId.charCodeAt(LINK_PREFIX.length + i);
    if (!isBase62(code)) throw new TypeError(`not a link id: ${linkId}`);
    buf[LINK_AT + i] = code;
  }
  mac.sign(buf, 0, MAC_AT, buf, MAC_AT, MAC_LENGTH);
  return PREFIX + buf.toString('base64url', 0, BINARY_LENGTH);
}

/** base64url character code -> its 6 bits, -1 for anything else (Buffer's decoder would skip it silently). */
const BASE64URL = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries()) BASE64URL[c.charCodeAt(0)] = i;

/**
 * The bytes a click id's characters spell, or null for a character outside base64url or
 * set spare bits in the last one: a non-canonical spelling of valid bytes, rejected so a
 * click id has exactly one spelling, the one we issued. Decoded here rather than by
 * Buffer.from + a re-encoding to compare: the ingester checks every click event this way,
 * and that pair cost about half of the ~2.3 µs a check took (measured in process).
 */
function decodeClickId(clickId: string): Buffer | null {
  const bytes = Buffer.allocUnsafe(BINARY_LENGTH);
  let at = 0;
  let bits = 0;
  let held = 0;
  for (let i = PREFIX.length; i < CLICK_ID_LENGTH; i++) {
    const code = clickId.charCodeAt(i);
    const value = code < 128 ? BASE64URL[code]! : -1;
    if (value < 0) return null;
    held = (held << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[at++] = (held >> bits) & 0xff;
      held &= (1 << bits) - 1;
    }
  }
  return held === 0 ? bytes : null;
}

/**
 * The link and time a click id was issued for, or null when it is not one of ours:
 * wrong shape, unknown version, or a MAC that does not match (forged, tampered, other
 * secret). Never throws, whatever the input.
 */
export function verifyClickId(secret: Buffer, clickId: string): { linkId: string; timestamp: number } | null {
  if (typeof clickId !== 'string' || clickId.length !== CLICK_ID_LENGTH || !clickId.startsWith(PREFIX)) return null;
  const bytes = decodeClickId(clickId);
  if (bytes === null || bytes[0] !== VERSION) return null;
  for (let i = LINK_AT; i < MAC_AT; i++) if (!isBase62(bytes[i]!)) return null;
  const expectedMac = Buffer.allocUnsafe(MAC_LENGTH);
  macFor(secret).sign(bytes, 0, MAC_AT, expectedMac, 0, MAC_LENGTH);
  // Every byte compared, whatever differs first: no timing tells how much of a forgery matched.
  let differs = 0;
  for (let i = 0; i < MAC_LENGTH; i++) differs |= expectedMac[i]! ^ bytes[MAC_AT + i]!;
  if (differs !== 0) return null;
  return {
    linkId: LINK_PREFIX + bytes.toString('latin1', LINK_AT, MAC_AT),
    timestamp: bytes.readUIntBE(TIME_AT, 6),
  };
}

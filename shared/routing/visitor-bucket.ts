/**
 * The visitor's bucket for a link: a number in [0, 100) with 0.01 resolution, stable
 * across processes and restarts (no seed), independent between links (the link id is
 * hashed in, so being in the first 10 % of one link says nothing about another).
 *
 * FNV-1a 32-bit over the UTF-8 bytes of `visitorId \0 linkId` (byte-wise, so any other
 * language can reproduce it), then murmur3's fmix32 finaliser: FNV-1a alone avalanches
 * poorly for inputs differing only in their last bytes.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnvByte(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, FNV_PRIME);
}

/** Feeds the UTF-8 encoding of `text` (lone surrogates as U+FFFD, like TextEncoder). */
function fnvUtf8(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      h = fnvByte(h, code);
      continue;
    }
    if (code < 0x800) {
      h = fnvByte(h, 0xc0 | (code >> 6));
      h = fnvByte(h, 0x80 | (code & 0x3f));
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
        h = fnvByte(h, 0xf0 | (point >> 18));
        h = fnvByte(h, 0x80 | ((point >> 12) & 0x3f));
        h = fnvByte(h, 0x80 | ((point >> 6) & 0x3f));
        h = fnvByte(h, 0x80 | (point & 0x3f));
        continue;
      }
      code = 0xfffd;
    }
    h = fnvByte(h, 0xe0 | (code >> 12));
    h = fnvByte(h, 0x80 | ((code >> 6) & 0x3f));
    h = fnvByte(h, 0x80 | (code & 0x3f));
  }
  return h;
}

function fmix32(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The 32-bit hash behind visitorBucket, exported for tests and cross-language checks. */
export function visitorHash(visitorId: string, linkId: string): number {
  let h = fnvUtf8(FNV_OFFSET, visitorId);
  h = fnvByte(h, 0);
  h = fnvUtf8(h, linkId);
  return fmix32(h);
}

export function visitorBucket(visitorId: string, linkId: string): number {
  // Scale the top bits to 0..9999 (multiply-shift, exact in doubles), then to [0, 100).
  return Math.floor((visitorHash(visitorId, linkId) * 10_000) / 4_294_967_296) / 100;
}

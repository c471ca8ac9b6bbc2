import type { SnapshotEntryHeader } from './snapshot-entry.ts';

/**
 * Reads a header line exactly as encodeSnapshotEntry writes it (JSON.stringify of
 * {version, linkId, domain, shortCode, clicksLimit}, in that order, then a newline)
 * straight from the bytes at `start`, without decoding a string and running
 * JSON.parse over it: loading a compacted snapshot parses a million headers, and this
 * is several times faster. Returns the header and where the link's JSON starts (after
 * the newline, before `end`). Anything else (another key order, whitespace, escapes,
 * non-ASCII text, numbers that are not small integers, no newline) returns null: the
 * caller falls back to JSON.parse, so the result is always what JSON.parse would give.
 */
export function parseEntryHeaderFast(data: Uint8Array, start: number, end: number): { header: SnapshotEntryHeader; linkStart: number } | null {
  // One cursor over `data`; module-level helpers, no closures: tsx (esbuild keepNames)
  // wraps every function created per call, which cost more than the parsing.
  cursor.data = data;
  cursor.at = start;
  cursor.end = end;
  if (!literal(VERSION)) return null;
  const version = integer();
  if (version < 0 || !literal(LINK_ID)) return null;
  const linkId = string();
  if (linkId === undefined || !literal(DOMAIN)) return null;
  const domain = literal(NULL) ? null : string();
  if (domain === undefined || !literal(SHORT_CODE)) return null;
  const shortCode = literal(NULL) ? null : string();
  if (shortCode === undefined || !literal(CLICKS_LIMIT)) return null;
  let clicksLimit: number | null = null;
  if (!literal(NULL)) {
    clicksLimit = integer();
    if (clicksLimit < 0) return null;
  }
  if (!literal(CLOSE_AND_NEWLINE)) return null;
  return { header: { version, linkId, domain, shortCode, clicksLimit }, linkStart: cursor.at };
}

const cursor: { data: Uint8Array; at: number; end: number } = { data: new Uint8Array(0), at: 0, end: 0 };

function literal(text: Uint8Array): boolean {
  const { data, at } = cursor;
  if (at + text.length > cursor.end) return false;
  for (let k = 0; k < text.length; k++) if (data[at + k] !== text[k]) return false;
  cursor.at = at + text.length;
  return true;
}

/** A non-negative integer of at most 15 digits (exact as a double), or -1. */
function integer(): number {
  const { data, end } = cursor;
  const from = cursor.at;
  let at = from;
  let value = 0;
  while (at < end && data[at]! >= DIGIT_0 && data[at]! <= DIGIT_9) value = value * 10 + (data[at++]! - DIGIT_0);
  cursor.at = at;
  const digits = at - from;
  if (digits === 0 || digits > 15 || (digits > 1 && data[from] === DIGIT_0)) return -1;
  return value;
}

/** A string of printable ASCII without escapes, or undefined. */
function string(): string | undefined {
  const { data, end } = cursor;
  if (data[cursor.at] !== QUOTE) return undefined;
  const from = cursor.at + 1;
  let at = from;
  while (at < end && data[at] !== QUOTE) {
    const byte = data[at]!;
    if (byte === BACKSLASH || byte < 0x20 || byte >= 0x80) return undefined;
    at++;
  }
  if (at >= end) return undefined;
  cursor.at = at + 1;
  return latin1(data, from, at);
}

/**
 * ASCII bytes as a string: Buffer's native latin1 slice when it is a Buffer (blocks
 * are; called directly, as toString's argument checks cost more than the copy), else
 * char codes.
 */
function latin1(data: Uint8Array, from: number, to: number): string {
  if (Buffer.isBuffer(data)) return (data as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(from, to);
  let text = '';
  for (let k = from; k < to; k++) text += String.fromCharCode(data[k]!);
  return text;
}

const bytes = (text: string) => new TextEncoder().encode(text);
const VERSION = bytes('{"version":');
const LINK_ID = bytes(',"linkId":');
const DOMAIN = bytes(',"domain":');
const SHORT_CODE = bytes(',"shortCode":');
const CLICKS_LIMIT = bytes(',"clicksLimit":');
const NULL = bytes('null');
const CLOSE_AND_NEWLINE = bytes('}\n');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

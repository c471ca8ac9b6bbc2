import { isUtf8 } from 'node:buffer';
import type { NativeBlockWriter } from '../../shared/clickhouse/native-block.ts';
import type { EventOrigin } from '../../shared/click-id-origin.ts';
import type { BatchBody, EventBatch } from './event-batch.ts';
import type { FastLinePlan } from './fast-line-plan.ts';

/**
 * A line of the bus's NDJSON straight from its bytes into the insert's Native
 * block, without JSON.parse, zod or any object: the ingester's hot path. It
 * accepts only the text JSON.stringify writes for an event whose keys are in
 * declaration order (what redirectors send, see the event publisher):
 * no whitespace, every key once in order, strings without escapes or control
 * characters (text beyond ASCII as well-formed UTF-8, except in ids, enums and
 * fixed-length strings), safe integers in plain notation within their declared range. Any other line returns false
 * untouched and takes the zod path. A line whose event id the batch already has
 * returns true with nothing written, as the zod path would write nothing. With
 * `genuine`, a line it fails returns false too (the zod path dead-letters it).
 *
 * Invariant (fast-line.test.ts checks it on generated and mutated lines): when
 * it takes a line, JSON.parse + the zod schema take it too, and it writes
 * exactly the values the zod path's row would.
 *
 * Text beyond ASCII (city and region names such as "München", referrers, UTM values)
 * is taken as its bytes: JSON.stringify writes it unescaped as UTF-8, and a string of
 * well-formed UTF-8 decodes to text whose UTF-8 is those bytes, which is what the zod
 * path writes. Declined instead, a line with one such name had its whole 500-line
 * message decoded (TextDecoder, split), and itself parsed the zod way (the ingest
 * bench's geo data has ~1,700 cities: nearly every message).
 *
 * Kept, measured: a 500-event message read into a Native block costs 2.6 µs per event
 * this way and 33 µs per event through JSON.parse + zod + the row (tinybench,
 * 2026-11-26, shared 2-core machine at load ~20); backlog ingestion runs at ~5.5 µs per
 * event end to end, so the zod path alone would cap it several times lower. Same-run
 * figure: `npm run bench -- ingest`, table "Hand-written piece kept", column "% of
 * backlog drain time/event" (what this path saves per event, against the backlog
 * drain's time per event of that run). On 2026-11-29, with text beyond ASCII taken:
 * 1,542 ns against 7,395 ns an event (2,389 against 8,238 before, when the bench's
 * place names sent nearly every message down the zod path).
 */
export type FastLine<Body extends BatchBody> = (src: Buffer, start: number, end: number, batch: EventBatch<Body>, genuine?: EventOrigin) => boolean;

const QUOTE = 0x22;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const CLOSE = 0x7d;
const NULL = Uint8Array.from([0x6e, 0x75, 0x6c, 0x6c]);
const TRUE = Uint8Array.from([0x74, 0x72, 0x75, 0x65]);
const FALSE = Uint8Array.from([0x66, 0x61, 0x6c, 0x73, 0x65]);
/**
 * Every safe integer has at most 16 digits. Summed digit by digit, a value below
 * 2^53 is exact and one at or above it never comes out below it, so the
 * MAX_SAFE_INTEGER check after the sum is exact.
 */
const MAX_DIGITS = 16;
/**
 * Per byte inside a string: 0 plain (printable ASCII), 1 the closing quote, 2 anything
 * this path leaves to zod (control characters, an escape), 3 a byte of a character
 * beyond ASCII (UTF-8 lead or continuation; the string is then checked as a whole).
 */
const IN_STRING = new Uint8Array(256).fill(2);
IN_STRING.fill(0, 0x20, 0x7f);
IN_STRING.fill(3, 0x80, 0x100);
IN_STRING[QUOTE] = 1;
IN_STRING[0x5c] = 2; // backslash: an escape

const STRING = 0;
const ENUM = 1;
const SAFEINT = 2;

export function compileFastLine(plan: FastLinePlan): FastLine<NativeBlockWriter> {
  const { fields, idField, linkField, tsField } = plan;
  const count = fields.length;
  const leads = fields.map((f) => f.lead);
  const nullable = fields.map((f) => f.nullable);
  const types = fields.map((f) => ({ string: STRING, enum: ENUM, safeint: SAFEINT, boolean: 3 })[f.value.type]);
  const prefixes = fields.map((f) => (f.value.type === 'string' ? f.value.prefix : null));
  const lengths = fields.map((f) => (f.value.type === 'string' ? (f.value.length ?? -1) : -1));
  const enums = fields.map((f) => (f.value.type === 'enum' ? f.value.bytes : []));
  const mins = fields.map((f) => (f.value.type === 'safeint' ? f.value.min : 0));
  const maxs = fields.map((f) => (f.value.type === 'safeint' ? f.value.max : 0));
  // Strings that must be plain ASCII here: ids are read as latin1 text (batch dedup, the
  // origin check), and an exact length counts UTF-16 units, which only ASCII has one per byte.
  const asciiOnly = fields.map((f, i) => i === idField || i === linkField || (f.value.type === 'string' && f.value.length !== null));
  const writes = plan.columns.map((c) => ({ string: 0, enum8: 1, int64: 2, bool: 3 })[c.write]);
  const codes = plan.columns.map((c) => (c.write === 'enum8' ? c.codes : new Uint8Array(0)));
  // Per line: where each field's value is ([start, end) of a string's bytes, start -1 for null),
  // and its number (an integer, a boolean as 0/1, an enum as its index).
  const valueStart = new Int32Array(count);
  const valueEnd = new Int32Array(count);
  const numbers = new Float64Array(count);

  const matches = (src: Buffer, at: number, end: number, text: Uint8Array) => {
    if (at + text.length > end) return false;
    for (let i = 0; i < text.length; i++) if (src[at + i] !== text[i]) return false;
    return true;
  };

  /** Reads the line into valueStart/valueEnd/numbers; false when it is not in the accepted form. */
  const scan = (src: Buffer, start: number, end: number): boolean => {
    let p = start;
    for (let f = 0; f < count; f++) {
      const lead = leads[f]!;
      if (!matches(src, p, end, lead)) return false;
      p += lead.length;
      if (nullable[f] && src[p] === NULL[0] && matches(src, p, end, NULL)) {
        valueStart[f] = -1;
        p += 4;
        continue;
      }
      const type = types[f];
      if (type === STRING || type === ENUM) {
        if (src[p] !== QUOTE) return false;
        const s = ++p;
        let cls = 0;
        let beyondAscii = false;
        for (;;) {
          while (p < end && (cls = IN_STRING[src[p]!]!) === 0) p++;
          if (p >= end || cls !== 3) break;
          beyondAscii = true;
          p++;
        }
        if (p >= end || cls !== 1) return false;
        if (beyondAscii && (type === ENUM || asciiOnly[f] || !isUtf8(src.subarray(s, p)))) return false;
        valueStart[f] = s;
        valueEnd[f] = p++;
        const length = valueEnd[f]! - s;
        if (type === ENUM) {
          const options = enums[f]!;
          let found = -1;
          for (let o = 0; o < options.length && found < 0; o++) if (options[o]!.length === length && matches(src, s, s + length, options[o]!)) found = o;
          if (found < 0) return false;
          numbers[f] = found;
        } else {
          const prefix = prefixes[f];
          if (prefix && !matches(src, s, s + length, prefix)) return false;
          if (lengths[f]! >= 0 && length !== lengths[f]) return false;
        }
      } else if (type === SAFEINT) {
        const negative = src[p] === MINUS;
        if (negative) p++;
        const s = p;
        let n = 0;
        let d = 0;
        while (p < end && (d = src[p]! - ZERO) >= 0 && d <= NINE - ZERO) {
          n = n * 10 + d;
          p++;
        }
        const digits = p - s;
        // JSON forbids leading zeros; fractions and exponents are left to the zod path.
        if (digits === 0 || digits > MAX_DIGITS || n > Number.MAX_SAFE_INTEGER || (digits > 1 && src[s] === ZERO)) return false;
        const value = negative ? -n : n;
        // The declared range (a time its column holds): zod refuses the rest, and so does this path.
        if (value < mins[f]! || value > maxs[f]!) return false;
        numbers[f] = value;
      } else if (matches(src, p, end, TRUE)) {
        numbers[f] = 1;
        p += 4;
      } else if (matches(src, p, end, FALSE)) {
        numbers[f] = 0;
        p += 5;
      } else {
        return false;
      }
    }
    return p === end - 1 && src[p] === CLOSE;
  };

  return (src, start, end, batch, genuine) => {
    if (!scan(src, start, end)) return false;
    const id = src.toString('latin1', valueStart[idField]!, valueEnd[idField]!);
    if (genuine !== undefined && !genuine(id, src.toString('latin1', valueStart[linkField]!, valueEnd[linkField]!), numbers[tsField]!)) return false;
    if (!batch.accepts(id)) return true;
    const data = batch.body.data;
    // Column f stores field f.
    for (let f = 0; f < count; f++) {
      const out = data[f]!;
      switch (writes[f]) {
        case 0: {
          const s = valueStart[f]!;
          if (s < 0) {
            out.byte(0);
            break;
          }
          const e = valueEnd[f]!;
          out.ensure(e - s + 5);
          const buf = out.buf;
          let o = out.length;
          // LEB128 length (five bytes hold any length a Buffer can have here), then the bytes.
          let len = e - s;
          while (len >= 0x80) {
            buf[o++] = (len & 0x7f) | 0x80;
            len >>>= 7;
          }
          buf[o++] = len;
          if (e - s > 32) o += src.copy(buf, o, s, e);
          else for (let i = s; i < e; i++) buf[o++] = src[i]!;
          out.length = o;
          break;
        }
        case 1:
          out.byte(codes[f]![numbers[f]!]!);
          break;
        case 2:
          out.int64(numbers[f]!);
          break;
        default:
          out.byte(numbers[f]!);
      }
    }
    batch.body.rows++;
    batch.add(id, numbers[tsField]!, batch.linkIds ? src.toString('latin1', valueStart[linkField]!, valueEnd[linkField]!) : undefined);
    return true;
  };
}

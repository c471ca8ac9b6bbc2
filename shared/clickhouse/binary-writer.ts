/**
 * ClickHouse's binary encoding of values, written into one growing byte buffer:
 * the values of a Native block's column (native-block.ts), RowBinary rows, or
 * raw text for a text format.
 *
 * Why binary: ClickHouse reads it with no text parsing at all (lengths and
 * little-endian numbers), and an integer stays exactly the value written, where
 * text formats reinterpret some (a DateTime64 written as text "123456" is read
 * as seconds, as JSON it is ticks).
 *
 * Per ClickHouse type: String and LowCardinality(String) = LEB128 byte length +
 * UTF-8 bytes; DateTime64(3) = Int64 milliseconds; Enum8 = its Int8 code;
 * Bool = one byte 0/1. RowBinary puts a row's values in the order the INSERT
 * names the columns; Native puts each column's values together.
 */
/** How values of a ClickHouse column type are written, for the types linkroute writes in binary. */
export type ValueEncoding =
  /** String, LowCardinality(String): LEB128 byte length + UTF-8. */
  | { kind: 'string' }
  /** Int64, DateTime64(3[, zone]) (milliseconds): Int64 little-endian. */
  | { kind: 'int64' }
  /** Enum8: one byte, the value's code. */
  | { kind: 'enum8'; codes: ReadonlyMap<string, number> }
  /** Bool: one byte, 0 or 1. */
  | { kind: 'bool' };

/** Throws for a type outside ValueEncoding. */
export function valueEncoding(type: string): ValueEncoding {
  if (type === 'String' || type === 'LowCardinality(String)') return { kind: 'string' };
  if (type === 'Int64' || /^DateTime64\(3(, '[^']*')?\)$/.test(type)) return { kind: 'int64' };
  if (type === 'Bool') return { kind: 'bool' };
  if (type.startsWith('Enum8(')) return { kind: 'enum8', codes: enumCodes(type) };
  throw new Error(`no binary encoding for the ClickHouse type ${type}`);
}

/** `Enum8('a' = 1, 'b' = 2)` -> a:1, b:2. */
function enumCodes(type: string): Map<string, number> {
  const codes = new Map<string, number>();
  for (const m of type.matchAll(/'([^'\\]*)'\s*=\s*(-?\d+)/g)) codes.set(m[1]!, Number(m[2]));
  return codes;
}

/** Where a row's values go, one call per column in column order (BinaryWriter, NativeBlockWriter). */
export interface RowSink {
  string(value: string): void;
  int64(value: number): void;
  byte(value: number): void;
}

export class BinaryWriter implements RowSink {
  /** Bytes [0, length) are written. Callers appending raw bytes (fast paths) call ensure() first. */
  buf: Buffer;
  length = 0;

  constructor(initialCapacity = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(64, initialCapacity));
  }

  /** Room for `bytes` more bytes at `length`. */
  ensure(bytes: number): void {
    const needed = this.length + bytes;
    if (needed <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.buf.length * 2));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  /** A String value: its UTF-8 byte length (LEB128), then the bytes. Lone surrogates become U+FFFD. */
  string(value: string): void {
    // A UTF-16 unit takes at most 3 UTF-8 bytes: up to 42 units the length fits one LEB128 byte.
    if (value.length <= 42) {
      this.ensure(1 + value.length * 3);
      const written = this.buf.write(value, this.length + 1);
      this.buf[this.length] = written;
      this.length += 1 + written;
      return;
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.ensure(5 + bytes);
    this.varUInt(bytes);
    this.length += this.buf.write(value, this.length);
  }

  /** Raw UTF-8 text with no length (text formats such as JSONEachRow share this buffer). */
  text(value: string): void {
    this.ensure(value.length * 3);
    this.length += this.buf.write(value, this.length);
  }

  /** An unsigned LEB128 number (String lengths). */
  varUInt(value: number): void {
    this.ensure(10);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  /** An Int64 (DateTime64(3) milliseconds); `value` must be a safe integer. */
  int64(value: number): void {
    this.ensure(8);
    // Two's complement halves without BigInt: the low 32 bits, then the (signed) high ones.
    const high = Math.floor(value / 0x1_0000_0000);
    this.buf.writeUInt32LE(value - high * 0x1_0000_0000, this.length);
    this.buf.writeInt32LE(high, this.length + 4);
    this.length += 8;
  }

  /** UInt8, Int8 (Enum8 codes) or Bool. */
  byte(value: number): void {
    this.ensure(1);
    this.buf[this.length++] = value & 0xff;
  }

  /** The bytes written so far (a view, not a copy). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

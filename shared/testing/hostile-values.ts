/**
 * Values for generated bad-input tests (API and redirector): what clients send by
 * mistake or on purpose. JSON numbers that JavaScript cannot write (1e400, -0, 2**64
 * exactly) travel as `RawJson` tokens; `RawBytes` puts bytes into a body that no
 * string can hold (invalid UTF-8).
 */

/** A JSON token written as is. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Bytes written as is inside a JSON string (between its quotes). */
export class RawBytes {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

export type Rand = () => number;

export function pick<T>(rand: Rand, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

export const int = (rand: Rand, below: number): number => Math.floor(rand() * below);

export const hostileStrings: readonly string[] = [
  '', ' ', '\t', 'a\u0000b', '\u0000', 'x'.repeat(5000), 'é'.repeat(3000), '💥', '\ud800', '\udfff\ud800', '<script>alert(1)</script>', "' OR 1=1 --",
  '%', '%00', '%zz', '_', '\\', '../../etc/passwd', 'javascript:alert(1)', 'http://', 'https://', 'https://ex ample.com', 'http://[::1', 'https://a.b/\r\nx: y',
  'NaN', 'Infinity', '-0', 'null', 'undefined', 'true', '-1', '1e400', '__proto__', 'constructor', 'toString', 'link_', 'campaign_', 'rule_', 'ck_', 'webhook_',
  'domain_', 'auto', 'pixel', 'ftp://x', 'mailto:a@b', 'data:text/html,x', 'https://example.com/\u0000', 'api', 'health', '\u202e\u0645', '\uFEFF', 'ｆｕｌｌ',
  'A'.repeat(65), 'a,b', '(none)', '*', '?', '#', '&', '=', '+', ' x ', 'x'.repeat(101), 'x'.repeat(256), '\u0085', '\u2028',
];

/** JSON number tokens: beyond doubles, negative zero, integers past 2**53 and 2**64, tiny ones. */
export const hostileNumbers: readonly RawJson[] = [
  '0', '-0', '-1', '1.5', '1e400', '-1e400', '1e-400', '1e308', '-1e308', '9007199254740993', '18446744073709551616', '2147483648', '-2147483649',
  '101', '2000000001', '1E2', '0.0000001', '123456789012345678901234567890', '4.9e-324',
].map((text) => new RawJson(text));

/** Invalid JSON a careless client writes where a number goes. */
export const invalidNumberTokens: readonly RawJson[] = ['NaN', 'Infinity', '-Infinity', '0x10', '+1', '01', '.5', '1.', '-', '1e', '1_000'].map((text) => new RawJson(text));

/** Query-string numbers. */
export const hostileNumberTexts: readonly string[] = ['0', '-0', '-1', '1.5', '1e3', '1e400', 'NaN', 'Infinity', '0x10', ' 1', '1 ', '+1', '01', '18446744073709551616', '9'.repeat(30), '', '2', '100', '101', '1000', '1001', '1000000', '1000001'];

/** Calendar days at and beyond the ends of what the stores hold, and days that do not exist. */
export const edgeDates: readonly string[] = [
  '1970-01-01', '1969-12-31', '1900-01-01', '0000-01-01', '0001-01-01', '2299-12-31', '2300-01-01', '9999-12-31', '10000-01-01', '+010000-01-01', '-000001-01-01',
  '2024-02-29', '2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-1-1', '2026-01-01T00:00:00Z', '20260101', '2026-01-32', '2026/01/01', 'today', '',
];

/** Instants at and beyond the ends of what the stores hold, and malformed ones. */
export function edgeTimestamps(now: number): string[] {
  return [
    '9999-12-31T23:59:59-14:00', '9999-12-31T23:59:59.999Z', '+275760-09-13T00:00:00Z', '10000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '0000-01-01T00:00:00Z',
    '1970-01-01T00:00:00Z', '2299-12-31T23:59:59.999Z', '2300-01-01T00:00:00Z', '2299-12-31T23:59:59-14:00', '2999-12-31T23:59:59+14:00', '2026-13-45T99:99:99Z',
    '2026-01-01T24:00:00Z', '2026-01-01T00:00:60Z', '2026-01-01', '2026-01-01T00:00:00', '2026-01-01T00:00:00.123456789Z', '2026-01-01T00:00:00+25:00',
    '2026-02-29T00:00:00Z', new Date(now + 30 * 86_400_000).toISOString(), new Date(now - 86_400_000).toISOString(), new Date(now + 86_400_000).toISOString().replace('Z', '+14:00'),
  ];
}

/** Byte sequences that are not UTF-8: lone continuation bytes, overlong forms, surrogates, truncated sequences. */
export const invalidUtf8: readonly Uint8Array[] = [[0xff], [0xfe, 0xff], [0xc3], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x92]].map((b) => new Uint8Array(b));

/** Percent-encodings that do not decode, or decode to something odd. */
export const hostileEncodings: readonly string[] = ['%', '%z', '%zz', '%ff', '%FF%FE', '%C3%28', '%E0%A4%A', '%ED%A0%80', '%00', '%0d%0a', '%2F', '%2e%2e', '%25', '%u0041', '%%', '+', '%20', encodeURIComponent('💥')];

/** Bytes of a string as a query or path carries them, percent-encoded (lone surrogates as U+FFFD). */
export function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** A value nested `depth` levels deep in arrays or objects. */
export function nested(depth: number, objects: boolean, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = objects ? { a: value } : [value];
  return value;
}

/** JSON text of `value`, with RawJson tokens and RawBytes inside strings, as bytes. `__proto__` keys are own keys (see `put`). */
export function jsonBytes(value: unknown): Buffer {
  const out: Buffer[] = [];
  const write = (v: unknown): void => {
    if (v instanceof RawJson) out.push(Buffer.from(v.text));
    else if (v instanceof RawBytes) out.push(Buffer.from('"'), Buffer.from(v.bytes), Buffer.from('"'));
    else if (Array.isArray(v)) {
      out.push(Buffer.from('['));
      v.forEach((item, i) => {
        if (i > 0) out.push(Buffer.from(','));
        write(item);
      });
      out.push(Buffer.from(']'));
    } else if (v !== null && typeof v === 'object') {
      out.push(Buffer.from('{'));
      Object.keys(v).forEach((key, i) => {
        if (i > 0) out.push(Buffer.from(','));
        out.push(Buffer.from(`${JSON.stringify(key)}:`));
        write((v as Record<string, unknown>)[key]);
      });
      out.push(Buffer.from('}'));
    } else out.push(Buffer.from(JSON.stringify(v) ?? 'null'));
  };
  write(value);
  return Buffer.concat(out);
}

/** Sets an own, enumerable key, `__proto__` included (an assignment would set the prototype). */
export function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy of plain JSON data (RawJson and RawBytes kept as they are). */
export function copy<T>(value: T): T {
  if (value instanceof RawJson || value instanceof RawBytes) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) put(out, key, copy((value as Record<string, unknown>)[key]));
    return out as T;
  }
  return value;
}

/** Runs `work` over `items`, at most `concurrency` at a time, in order of start. */
export async function inPool<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** The run's seed: `BAD_INPUT_SEED` when set (to repeat a run), else a fresh one. */
export function badInputSeed(env: string | undefined): number {
  if (env !== undefined && env !== '') {
    const seed = Number(env);
    if (!Number.isInteger(seed)) throw new Error(`BAD_INPUT_SEED must be an integer, got ${env}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

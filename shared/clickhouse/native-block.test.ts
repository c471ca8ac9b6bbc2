import { describe, expect, it } from 'vitest';
import { NativeBlockWriter, nativeColumns, type NativeColumn } from './native-block.ts';

/** Reads a Native block back: names, types and each column's raw values (strings as text). */
function readNative(block: Buffer): { names: string[]; types: string[]; values: unknown[][] } {
  let p = 0;
  const varUInt = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = block[p++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  const string = () => {
    const n = varUInt();
    p += n;
    return block.toString('utf8', p - n, p);
  };
  const columns = varUInt();
  const rows = varUInt();
  const names: string[] = [];
  const types: string[] = [];
  const values: unknown[][] = [];
  for (let c = 0; c < columns; c++) {
    names.push(string());
    const type = string();
    types.push(type);
    const column: unknown[] = [];
    for (let r = 0; r < rows; r++) {
      if (type.startsWith('DateTime64')) {
        column.push(Number(block.readBigInt64LE(p)));
        p += 8;
      } else if (type === 'String') {
        column.push(string());
      } else {
        column.push(block[p++]);
      }
    }
    values.push(column);
  }
  expect(p).toBe(block.length);
  return { names, types, values };
}

describe('NativeBlockWriter', () => {
  const columns: NativeColumn[] = nativeColumns([
    { name: 'id', type: 'String' },
    { name: 'ts', type: "DateTime64(3, 'UTC')" },
    { name: 'kind', type: "Enum8('click' = 1, 'impression' = 2)" },
    { name: 'country', type: 'LowCardinality(String)' },
    { name: 'bot', type: 'Bool' },
  ]);

  it('lays the rows out column by column, LowCardinality declared as String', () => {
    const rows = [
      ['a', 1_700_000_000_123, 1, 'DE', 0],
      ['', -1, 2, '', 1],
      ['x'.repeat(300), 0, 1, 'Grüße 😀', 1],
      ['y'.repeat(20_000), Number.MAX_SAFE_INTEGER, 2, 'US', 0],
    ] as const;
    const w = new NativeBlockWriter(columns, 8);
    for (const [id, ts, kind, country, bot] of rows) {
      w.string(id);
      w.int64(ts);
      w.byte(kind);
      w.string(country);
      w.byte(bot);
    }
    expect(w.rows).toBe(rows.length);
    const block = readNative(w.bytes());
    expect(block.names).toEqual(['id', 'ts', 'kind', 'country', 'bot']);
    expect(block.types).toEqual(['String', "DateTime64(3, 'UTC')", "Enum8('click' = 1, 'impression' = 2)", 'String', 'Bool']);
    expect(block.values).toEqual([0, 1, 2, 3, 4].map((c) => rows.map((r) => r[c])));
  });

  it('makes an empty block of no rows, and refuses a half-written row', () => {
    expect(readNative(new NativeBlockWriter(columns).bytes()).values).toEqual([[], [], [], [], []]);
    const w = new NativeBlockWriter(columns);
    w.string('a');
    w.int64(1);
    expect(() => w.bytes()).toThrow(/half written/);
  });

  it('knows no layout for other types', () => {
    expect(() => nativeColumns([{ name: 'n', type: 'Nullable(String)' }])).toThrow(/no binary encoding for the ClickHouse type Nullable\(String\)/);
  });
});

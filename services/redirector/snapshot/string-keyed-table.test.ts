import { describe, expect, it } from 'vitest';
import { StringKeyedTable, tableHash } from './string-keyed-table.ts';

describe('StringKeyedTable', () => {
  it('behaves like a Map under random sets, deletes and lookups (growth, deleted slots, reuse)', () => {
    const table = new StringKeyedTable<number>();
    const model = new Map<string, number>();
    let seed = 12_345;
    const next = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0);
    const key = () => `k${next() % 5_000}`;
    const mismatches: string[] = [];
    for (let step = 0; step < 200_000; step++) {
      const k = key();
      const op = next() % 10;
      if (op < 5) {
        table.set(k, step);
        model.set(k, step);
      } else if (op < 8) {
        if (table.delete(k) !== model.delete(k)) mismatches.push(`delete ${k} at ${step}`);
      } else if (table.get(k) !== model.get(k) || table.has(k) !== model.has(k)) {
        mismatches.push(`get ${k} at ${step}`);
      }
      if (table.size !== model.size) mismatches.push(`size at ${step}`);
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    for (let i = 0; i < 5_000; i++) expect(table.get(`k${i}`)).toBe(model.get(`k${i}`));
    expect(new Map(table.entries())).toEqual(model);
  });

  it('finds keys given as fresh strings, and tells apart keys that differ in one character', () => {
    const table = new StringKeyedTable<string>();
    for (const k of ['', 'a', 'A', 'b0001', 'b0002', 'caf\u00e9', 'cafe\u0301', '\u{1F600}']) table.set(k, `v:${k}`);
    for (const k of ['', 'a', 'A', 'b0001', 'b0002', 'caf\u00e9', 'cafe\u0301', '\u{1F600}']) expect(table.get((' ' + k).slice(1))).toBe(`v:${k}`);
    expect(table.get('b0003')).toBeUndefined();
    expect(table.get('B0001')).toBeUndefined();
  });

  it('keeps working when every key lands in the same bucket chain', () => {
    const table = new StringKeyedTable<number>();
    // Many keys, then delete most: lookups must still probe past deleted buckets.
    for (let i = 0; i < 1_000; i++) table.set(`x${i}`, i);
    for (let i = 0; i < 1_000; i++) if (i % 10 !== 0) table.delete(`x${i}`);
    for (let i = 0; i < 1_000; i++) expect(table.get(`x${i}`)).toBe(i % 10 === 0 ? i : undefined);
    expect(table.size).toBe(100);
  });

  it('hashes to 32-bit integers', () => {
    for (const k of ['', 'b0000', 'x'.repeat(1000)]) expect(Number.isInteger(tableHash(k)) && Math.abs(tableHash(k)) < 2 ** 31 + 1).toBe(true);
  });
});

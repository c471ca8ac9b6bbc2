import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { FORMULA_STARTS, neutralisedCell, neutralisedSql, toCsv } from './csv.ts';

describe('CSV cells a spreadsheet would run as formulas', () => {
  it('prefixes text starting with = + - @ tab or CR with a single quote, and nothing else', () => {
    expect(neutralisedCell('=HYPERLINK("http://evil.example","x")')).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(neutralisedCell('+1+1')).toBe(`'+1+1`);
    expect(neutralisedCell('-2+3')).toBe(`'-2+3`);
    expect(neutralisedCell('@SUM(A1)')).toBe(`'@SUM(A1)`);
    expect(neutralisedCell('\t=1')).toBe(`'\t=1`);
    expect(neutralisedCell('\r=1')).toBe(`'\r=1`);
    for (const safe of ['', 'newsletter', 'a=b', ' =1', "'=1", 'https://example.com/?q=-1']) expect(neutralisedCell(safe)).toBe(safe);
  });

  it('toCsv neutralises text cells, never numbers or booleans, and quotes what needs it', () => {
    const csv = toCsv(['value', 'clicks', 'revenue', 'ok'], [{ value: '=1+1', clicks: 3, revenue: -4.5, ok: true }, { value: null, clicks: 0, revenue: 0, ok: false }]);
    expect(parse(csv, { columns: true })).toEqual([
      { value: "'=1+1", clicks: '3', revenue: '-4.5', ok: 'true' },
      { value: '', clicks: '0', revenue: '0', ok: 'false' },
    ]);
  });

  it('the SQL form tests the same characters, as ClickHouse string literals', () => {
    const sql = neutralisedSql('utm_source');
    expect(sql).toBe(`if(substring(utm_source, 1, 1) IN ('=', '+', '-', '@', '\\t', '\\r'), concat('''', utm_source), utm_source)`);
    expect(FORMULA_STARTS).toHaveLength(6);
  });
});

import { describe, expect, it } from 'vitest';
import { fileInsertShape, insertFromFileSql, isBinaryFormat } from './insert-from-file.ts';

describe('fileInsertShape', () => {
  it('takes the statements @clickhouse/client writes', () => {
    expect(fileInsertShape('INSERT INTO events FORMAT JSONEachRow')).toEqual({ target: 'events', format: 'JSONEachRow' });
    expect(fileInsertShape('INSERT INTO db.events (a, b, `c d`) FORMAT RowBinary')).toEqual({ target: 'db.events (a, b, `c d`)', format: 'RowBinary' });
    expect(fileInsertShape('  insert into `my table`(a)  format TabSeparated \n')).toEqual({ target: '`my table`(a)', format: 'TabSeparated' });
  });

  it('leaves every other INSERT to the inline path', () => {
    for (const sql of [
      'INSERT INTO t SETTINGS async_insert=1 FORMAT JSONEachRow',
      'INSERT INTO t SELECT * FROM input(\'a String\') FORMAT CSV',
      "INSERT INTO FUNCTION file('x.csv') FORMAT CSV",
      'INSERT INTO t (* EXCEPT (a)) FORMAT JSONEachRow',
      'INSERT INTO t VALUES (1)',
      '/* c */ INSERT INTO t FORMAT CSV',
      'INSERT INTO t FORMAT CSV; DROP TABLE t',
      'INSERT INTO `a`b` FORMAT CSV',
    ]) {
      expect(fileInsertShape(sql), sql).toBeNull();
    }
  });
});

describe('insertFromFileSql', () => {
  it('reads the named file, uncompressed, in the statement format', () => {
    expect(insertFromFileSql({ target: 'events (a, b)', format: 'RowBinary' }, "/tmp/o'k\\x/insert-1.data")).toBe(
      "INSERT INTO events (a, b) FROM INFILE '/tmp/o\\'k\\\\x/insert-1.data' COMPRESSION 'none' FORMAT RowBinary",
    );
  });
});

describe('isBinaryFormat', () => {
  it('tells byte formats from text formats', () => {
    for (const f of ['RowBinary', 'RowBinaryWithNamesAndTypes', 'Native', 'Parquet', 'ArrowStream']) expect(isBinaryFormat(f), f).toBe(true);
    for (const f of ['JSONEachRow', 'TabSeparated', 'CSV', 'Values', 'CustomSeparated']) expect(isBinaryFormat(f), f).toBe(false);
  });
});
